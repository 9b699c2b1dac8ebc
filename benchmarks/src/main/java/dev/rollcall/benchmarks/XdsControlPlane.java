package dev.rollcall.benchmarks;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.server.FleetServer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.NameResolverRegistry;
import io.grpc.xds.XdsNameResolverProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 15, the xDS control plane ({@code FleetServer}'s ADS door):
 * <ol>
 *   <li>drain → calls land only on the rest: {@value #WORKERS} real workers in this JVM behind a
 *       resolver and a {@code FleetServer} (every {@code rollcall.serve.*} key at its default), one
 *       caller in a tight loop on a grpc-java xDS channel ({@code xds:///fleet}, bootstrap in code)
 *       and one on a {@code rollcall:} channel of the same resolver, both at once through the same
 *       drains; {@value #DRAINS} drains a run (the drained worker in turn), three runs in the full
 *       plan, one in the quick; beside them a plain ADS stream ({@link AdsClients}) times when the
 *       control plane's answer without the drained worker arrives;</li>
 *   <li>the service's retained heap per connected xDS client and per fleet of 10,000 endpoints, in a
 *       service JVM of its own ({@link XdsServiceMain}, synthetic workers with
 *       {@code rollcall.probe.protocol=none}), the clients plain ADS streams ({@link AdsClients}).</li>
 * </ol>
 */
final class XdsControlPlane {

    static final int WORKERS = 4;
    static final int DRAINS = 20;
    /**
     * Calls in a row that must miss the drained worker before the first of them counts as the
     * first call that landed only on the rest: with {@value #WORKERS} workers in round robin, a
     * worker still in the set would have answered about a quarter of them.
     */
    static final int CONFIRM = 100;
    static final int HEAP_FLEET = 10;
    static final int BIG_FLEET = Plan.LARGE;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String FLEET = "fleet";
    /**
     * The heap rows' service JVMs: the parallel collector, whose used heap after a full collection is
     * what is live; G1 counts a whole region for each object of half a region or more (an encoded
     * assignment of 10,000 endpoints is one), which moved the figures by megabytes.
     */
    private static final List<String> HEAP_JVM = List.of("-Xmx1g", "-XX:+UseParallelGC", "-Xlog:gc:stderr");

    private XdsControlPlane() {
    }

    static void run(Plan plan, Report report, Path logs) throws Exception {
        drains(plan == Plan.QUICK ? 1 : 3, report);
        heap(plan, report, logs);
    }

    // ---- drain → first call that lands only on the new set

    private static void drains(int runs, Report report) throws Exception {
        List<RollcallWorker> workers = new ArrayList<>();
        PushDiscovery discovery = new PushDiscovery("push[xds-drain]");
        XdsNameResolverProvider provider = null;
        try {
            for (int i = 0; i < WORKERS; i++) {
                workers.add(RollcallWorker.builder().version("1.0.0").start());
            }
            List<WorkerEndpoint> all = workers.stream().map(RollcallWorker::endpoint).toList();
            List<String> ids = workers.stream().map(RollcallWorker::instanceId).toList();
            discovery.push(all);
            try (WorkerResolver resolver = WorkerResolver.builder().name("bench-xds").discovery(discovery)
                    .policy(VersionPolicy.rule(w -> Verdict.accept())).fetchSchemas(false).build();
                 FleetServer server = FleetServer.builder(resolver).config(RollcallConfig.of(Map.of()))
                         .host("127.0.0.1").port(0).http(false).start()) {
                resolver.awaitWorkers(WORKERS, WAIT);
                String scheme = "rollcall-bench-xds";
                provider = XdsNameResolverProvider.createForTest(scheme, bootstrap(server.grpcAddress().getPort()));
                NameResolverRegistry.getDefaultRegistry().register(provider);
                ManagedChannel xds = Grpc.newChannelBuilder(scheme + ":///" + FLEET, InsecureChannelCredentials.create())
                        .build();
                ManagedChannel target = ManagedChannelBuilder.forTarget(resolver.grpcTarget()).usePlaintext().build();
                try (CallerLog viaXds = CallerLog.calling("xds", xds, ids);
                     CallerLog viaTarget = CallerLog.calling("rollcall-target", target, ids);
                     AdsClients ads = new AdsClients(server.grpcAddress().getPort(), FLEET)) {
                    ads.open(1, WORKERS);
                    List<CallerLog> callers = List.of(viaXds, viaTarget);
                    await("both channels call every worker", () -> callers.stream()
                            .allMatch(c -> java.util.stream.IntStream.range(0, WORKERS).allMatch(c::answeredBy)));
                    for (int i = 0; i < 4; i++) { // warm-up: every path compiled, every worker drained once
                        cycle(i, workers, resolver, discovery, callers, ads);
                    }
                    long[][] xdsRuns = new long[runs][];
                    long[][] targetRuns = new long[runs][];
                    long[][] adsRuns = new long[runs][];
                    for (int run = 0; run < runs; run++) {
                        xdsRuns[run] = new long[DRAINS];
                        targetRuns[run] = new long[DRAINS];
                        adsRuns[run] = new long[DRAINS];
                        for (int d = 0; d < DRAINS; d++) {
                            long[] out = cycle(d, workers, resolver, discovery, callers, ads);
                            xdsRuns[run][d] = out[0];
                            targetRuns[run][d] = out[1];
                            adsRuns[run][d] = out[2];
                            System.out.printf(Locale.ROOT, "  drain %d.%d: xDS %s, rollcall: %s, ADS answer %s%n",
                                    run + 1, d + 1, ms(out[0]), ms(out[1]), ms(out[2]));
                        }
                    }
                    drainRows(xdsRuns, targetRuns, adsRuns, viaXds.failures() + viaTarget.failures(), report);
                } finally { // before the resolver and the server close, so that neither channel sees them go
                    shutDown(xds);
                    shutDown(target);
                }
            }
        } finally {
            if (provider != null) {
                NameResolverRegistry.getDefaultRegistry().deregister(provider);
            }
            workers.forEach(RollcallWorker::close);
        }
    }

    private static void shutDown(ManagedChannel channel) throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    /** A bootstrap as a file would give it: one xDS server, plaintext, xDS v3. */
    static Map<String, ?> bootstrap(int port) {
        return Map.of(
                "xds_servers", List.of(Map.of(
                        "server_uri", "127.0.0.1:" + port,
                        "channel_creds", List.of(Map.of("type", "insecure")),
                        "server_features", List.of("xds_v3"))),
                "node", Map.of("id", "rollcall-bench-grpc-java"));
    }

    /**
     * Drains worker {@code d % WORKERS} and returns, for each caller, how long after {@code drain()}
     * calls stopped landing on it ({@link CallerLog#outAfter}), and last how long until the plain ADS
     * stream had an assignment without it ({@link AdsClients#withoutAfter}); then brings it back as a worker the
     * resolver has no history of (as scenario 7 does, so that no flap damping holds it out) and waits
     * until both channels call it again and the publish pacing has run out.
     */
    private static long[] cycle(int d, List<RollcallWorker> workers, WorkerResolver resolver, PushDiscovery discovery,
                                List<CallerLog> callers, AdsClients ads) throws Exception {
        int drained = d % WORKERS;
        RollcallWorker worker = workers.get(drained);
        WorkerEndpoint gone = worker.endpoint();
        String address = gone.host() + ":" + gone.port();
        long[] out = new long[callers.size() + 1];
        Arrays.fill(out, -1);
        callers.forEach(CallerLog::reset);
        ads.resetArrivals();
        long t0 = System.nanoTime();
        worker.drain();
        await("calls land only on the other workers", () -> {
            boolean all = true;
            for (int i = 0; i < callers.size(); i++) {
                out[i] = out[i] >= 0 ? out[i] : callers.get(i).outAfter(t0, drained, CONFIRM);
                all &= out[i] >= 0;
            }
            out[callers.size()] = ads.withoutAfter(t0, address);
            return all && out[callers.size()] >= 0;
        });
        worker.resume();
        List<WorkerEndpoint> rest = new ArrayList<>(workers.stream().map(RollcallWorker::endpoint).toList());
        rest.remove(gone);
        discovery.push(rest);
        resolver.await(s -> s.counts().candidates() == WORKERS - 1, WAIT);
        callers.forEach(CallerLog::reset);
        discovery.push(workers.stream().map(RollcallWorker::endpoint).toList());
        resolver.await(s -> s.compatibleEndpoints().contains(gone), WAIT);
        await("both channels call the resumed worker", () -> callers.stream().allMatch(c -> c.answeredBy(drained)));
        QuietGap.await();
        return out;
    }

    private static void drainRows(long[][] xdsRuns, long[][] targetRuns, long[][] adsRuns, long failures,
                                  Report report) {
        int runs = xdsRuns.length;
        long x50 = middle(xdsRuns, 50);
        long x99 = middle(xdsRuns, 99);
        long t50 = middle(targetRuns, 50);
        long t99 = middle(targetRuns, 99);
        String of = runs == 1 ? DRAINS + " drains" : DRAINS + " drains, the middle of " + runs + " runs";
        report.add(new Report.Row("15. drain() → calls land only on the rest, grpc-java xds:/// channel, median / p99 of "
                + of + " (baseline: a rollcall: channel, same drains)",
                ms(x50) + " / " + ms(x99), ms(t50) + " / " + ms(t99), Report.lessIsBetter(x99, t99),
                "p99 ≤ 100 ms", Report.met(x99 <= TimeUnit.MILLISECONDS.toNanos(100))));
        report.add(new Report.Row("15. … the control plane's share: drain() → an ADS stream has the endpoints without it,"
                + " median / p99",
                ms(middle(adsRuns, 50)) + " / " + ms(middle(adsRuns, 99)), "—", "—", "measured", "—"));
        StringBuilder each = new StringBuilder();
        for (int r = 0; r < runs; r++) {
            each.append(String.format(Locale.ROOT, "%s run %d: xDS %s / %s, rollcall: %s / %s", r == 0 ? "" : ";",
                    r + 1, ms(Latencies.percentile(xdsRuns[r], 50)), ms(Latencies.percentile(xdsRuns[r], 99)),
                    ms(Latencies.percentile(targetRuns[r], 50)), ms(Latencies.percentile(targetRuns[r], 99))));
        }
        long[] xdsAll = Arrays.stream(xdsRuns).flatMapToLong(Arrays::stream).toArray();
        long[] targetAll = Arrays.stream(targetRuns).flatMapToLong(Arrays::stream).toArray();
        Charts.distribution("xds-drain", "drain() → calls land only on the rest", "grpc-java xDS channel", xdsAll);
        Charts.distribution("xds-drain", "drain() → calls land only on the rest", "rollcall: channel (in-process)",
                targetAll);
        report.note(String.format(Locale.ROOT, "xDS (15, drains): %d RollcallWorkers (1.0.0) in the harness JVM, a"
                + " resolver on a push discovery and a FleetServer (defaults: xDS on, fleet 'fleet') in the same JVM;"
                + " one caller thread in a tight loop of unary WorkerInfo calls on a grpc-java 1.85 xDS channel"
                + " (xds:///fleet, bootstrap given in code, the door on loopback) and one on a rollcall: channel of"
                + " the same resolver (rollcall_verified over round_robin), both running through the same drains on"
                + " two shared cores. A drain: worker.drain() at t0, then, per channel, the start of the first call"
                + " that started after t0 and after the last call the drained worker answered, once %d calls in a"
                + " row from it were answered by the others (the drained worker keeps answering calls: only"
                + " routing is measured); the control plane's share: when a plain ADS stream (AdsClients, subscribed"
                + " as a grpc-java channel is) in the same process received the first assignment without the"
                + " drained worker HEALTHY; then it is resumed, removed from discovery and added back (no flap"
                + " damping), both channels call it again, and the publish pacing runs out before the next. The"
                + " drained worker in turn; 4 untimed drains first. p99 of %d is the slowest (nearest rank); the"
                + " row is the median over runs of each run's median and p99 (%s). Failed calls: %d.",
                WORKERS, CONFIRM, DRAINS, each, failures));
    }

    /** The median over runs of each run's {@code p}-th percentile. */
    private static long middle(long[][] runs, double p) {
        long[] each = Arrays.stream(runs).mapToLong(r -> Latencies.percentile(r, p)).toArray();
        return Latencies.median(each);
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }

    private static void await(String what, java.util.concurrent.Callable<Boolean> done) {
        org.awaitility.Awaitility.await(what).atMost(WAIT).pollInterval(Duration.ofMillis(1)).until(done);
    }

    // ---- the control plane's heap

    private static void heap(Plan plan, Report report, Path logs) throws InterruptedException {
        int clients = plan == Plan.QUICK ? 500 : 1_000;
        int bigClients = plan == Plan.QUICK ? 100 : 200;
        Heap small;
        Heap big;
        long bigFresh;
        long offGrowth;
        long heldFresh;
        long held;
        int counted;
        try (ChildJvm service = ChildJvm.start("xds-service", HEAP_JVM,
                XdsServiceMain.class, List.of("on"), logs.resolve("xds-service.log"));
             AdsClients one = new AdsClients(Integer.parseInt(service.awaitLine("PORT ")), FLEET);
             AdsClients more = new AdsClients(one.port(), FLEET)) {
            ask(service, "fleet " + HEAP_FLEET, "FLEET ");
            one.open(1, HEAP_FLEET);
            more.open(clients, HEAP_FLEET); // untimed: loads the classes and compiles the paths on both sides
            more.close();
            awaitStreams(service, 1);
            small = clients(service, more, clients, HEAP_FLEET);
            counted = small.counted();
            ask(service, "fleet " + BIG_FLEET, "FLEET ");
            one.awaitEndpoints(BIG_FLEET);
            bigFresh = heapOf(service);
            heldFresh = Long.parseLong(ask(service, "assignments", "ASSIGNMENTS "));
            big = clients(service, more, bigClients, BIG_FLEET);
            held = Long.parseLong(ask(service, "assignments", "ASSIGNMENTS "));
        }
        try (ChildJvm service = ChildJvm.start("xds-service-off", HEAP_JVM,
                XdsServiceMain.class, List.of("off"), logs.resolve("xds-service-off.log"))) {
            service.awaitLine("PORT ");
            ask(service, "fleet " + HEAP_FLEET, "FLEET ");
            long before = heapOf(service);
            ask(service, "fleet " + BIG_FLEET, "FLEET ");
            offGrowth = heapOf(service) - before;
        }
        double perClient = (small.with() - small.without()) / (double) clients;
        double perBigClient = (big.with() - big.without()) / (double) bigClients;
        long onGrowth = big.without() - small.without();
        long door = onGrowth - offGrowth;
        report.add(new Report.Row("15. retained heap per xDS client (an ADS stream, a gRPC channel's 4 resources), "
                + Report.count(clients) + " on " + HEAP_FLEET + " workers / " + Report.count(bigClients) + " on "
                + Report.count(BIG_FLEET),
                Report.bytes(perClient) + " / " + Report.bytes(perBigClient) + " (" + Report.count(counted)
                        + " counted)", "—", "—", "measured",
                counted == clients + 1 ? "—" : "**no** (streams counted " + counted + ")"));
        report.add(new Report.Row("15. retained heap of the xDS door per " + Report.count(BIG_FLEET)
                + " endpoints (growth from " + HEAP_FLEET + ", xDS on less off)",
                Report.bytes(door) + " (" + Report.bytes(onGrowth) + " − " + Report.bytes(offGrowth) + "; "
                        + held + " assignments held)", "—", "—", "measured", "—"));
        report.note(String.format(Locale.ROOT, "xDS (15, heap): the service JVM (XdsServiceMain, -Xmx1g, parallel"
                + " collector) runs a resolver with rollcall.probe.protocol=none over synthetic workers (127.1.0.1"
                + " upward, port 9, rollcall.version=1.0.0 from discovery: nothing listens, nothing is dialled) and"
                + " a FleetServer with the defaults; the clients, in the harness JVM, are plain ADS streams (Envoy's"
                + " protos) that subscribe as a grpc-java channel does (Listener, then RouteConfiguration, Cluster"
                + " and ClusterLoadAssignment as each answer comes, every answer ACKed), one connection each; one"
                + " stays open throughout. Every heap reading: used heap after System.gc(), repeated half a second apart until two agree within 256 KiB. Per client: used heap with %,d more streams open (each"
                + " has its assignment) minus after they closed, ÷ %,d, on a fleet of %d; then %,d likewise on a"
                + " fleet of %,d. Per fleet: used heap after GC at %,d workers minus at %d, both after the streams"
                + " above closed (%s), less the same growth in a second service JVM with"
                + " rollcall.serve.xds.enabled=false (%s: the resolver's and the fleet API's own). Right after the"
                + " fleet grew, before the %,d streams came and went, the service held %s more and %d"
                + " ClusterLoadAssignment messages (jcmd GC.class_histogram), %d after: java-control-plane's"
                + " CachedProtoResourcesSerializer (a Guava cache with weak values and strong keys) keeps the"
                + " assignment of every publish (the fleet of %,d came in several) until a read or write after a"
                + " collection cleans its segment, so the door's heap ranges from one assignment to several.",
                clients, clients, HEAP_FLEET, bigClients, BIG_FLEET, BIG_FLEET, HEAP_FLEET, Report.bytes(onGrowth),
                Report.bytes(offGrowth), bigClients, Report.bytes(bigFresh - big.without()), heldFresh, held, BIG_FLEET));
    }

    /** Used heap after GC with {@code n} more streams open, each with its assignment, and after they closed. */
    private record Heap(long with, long without, int counted) {
    }

    private static Heap clients(ChildJvm service, AdsClients more, int n, int endpoints)
            throws InterruptedException {
        more.open(n, endpoints);
        int counted = Integer.parseInt(ask(service, "streams", "STREAMS "));
        long with = heapOf(service);
        more.close();
        awaitStreams(service, 1);
        return new Heap(with, heapOf(service), counted);
    }

    private static void awaitStreams(ChildJvm service, int n) {
        await("the service counts " + n + " ADS streams",
                () -> Integer.parseInt(ask(service, "streams", "STREAMS ")) == n);
    }

    /**
     * The service's used heap after GC once it has settled: two readings half a second apart within
     * 256 KiB of each other (right after a fleet of 10,000 is published, the resolver's JVM held
     * megabytes more for a moment, which moved the per-fleet figure from run to run).
     */
    private static long heapOf(ChildJvm service) throws InterruptedException {
        long last = Long.parseLong(ask(service, "heap", "HEAP "));
        for (int i = 0; i < 20; i++) {
            Thread.sleep(500);
            long now = Long.parseLong(ask(service, "heap", "HEAP "));
            if (Math.abs(now - last) <= 256 * 1024) {
                return Math.min(now, last);
            }
            last = now;
        }
        return last;
    }

    /** Sends {@code command} and returns the rest of the first line starting with {@code prefix}. */
    private static String ask(ChildJvm jvm, String command, String prefix) {
        jvm.send(command);
        return jvm.awaitLine(prefix);
    }
}
