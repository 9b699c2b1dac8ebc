package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Scenario 14, the fleet service ({@code rollcall.v1.FleetService} served by {@code FleetServer}), on
 * {@value #POOL} real workers in this JVM ({@link LoopbackServers}, ephemeral loopback ports). The
 * service runs in a JVM of its own ({@link FleetServiceMain}: a resolver on a push discovery and the
 * server with every {@code rollcall.serve.*} key at its default), its followers in another
 * ({@link FleetWatchersMain}: plain grpc-java {@code WatchFleet} streams), so that the service's CPU
 * time and heap are its own:
 * <ol>
 *   <li>publish → seen by 1, 100 and 1,000 watchers over a fleet of {@value #SMALL_FLEET} workers whose
 *       window slides by one worker per step (one leaves, one joins: a publish each), median and p99 of
 *       receipt minus the snapshot's {@code publishedAt} (both the system clock, µs), against an
 *       in-process listener of the same resolver in the same steps;</li>
 *   <li>the service JVM's CPU per delivered snapshot, 100 watchers, one worker changing among
 *       {@value #SMALL_FLEET} and among {@value #BIG_FLEET}, less the same steps with no watcher (the
 *       resolver's own work);</li>
 *   <li>retained heap per idle watcher: the service JVM's used heap after GC with 1,000 streams open
 *       minus before, ÷ 1,000;</li>
 *   <li>N coordinators following one service (each its own connection) against N coordinators each
 *       embedding a resolver ({@link EmbeddedCoordinatorsMain}), both sides with
 *       {@code keepProbeChannels(false)}: probes and connections the workers count, CPU seconds.</li>
 * </ol>
 */
final class FleetService {

    static final int SMALL_FLEET = 10;
    static final int BIG_FLEET = 1_000;
    /** The workers the windows slide over: every URL is out of the window most of the time (no flap damping). */
    static final int POOL = BIG_FLEET + 100;
    static final int[] WATCHERS = {1_000, 100, 1};
    static final int IDLE_WATCHERS = 1_000;
    static final int CPU_WATCHERS = 100;
    /** The service's default {@code rollcall.serve.max-watchers-per-connection}: the followers stay within it. */
    static final int PER_CONNECTION = 16;

    /** The size of one WatchFleet message by fleet size, as the CPU rows measured it. */
    private static final Map<Integer, Long> messageBytes = new java.util.concurrent.ConcurrentHashMap<>();
    /** Likewise, of one change message ({@code changes_only}). */
    private static final Map<Integer, Long> changeBytes = new java.util.concurrent.ConcurrentHashMap<>();

    private FleetService() {
    }

    /**
     * Steps per watcher count: enough that one publish caught by a GC pause (which delays all its
     * deliveries at once) stays under 1 % of them, so that the p99 is not that one pause.
     */
    static int steps(Plan plan) {
        return plan == Plan.QUICK ? 120 : 200;
    }

    static void run(Plan plan, Report report, Path logs) throws Exception {
        try (LoopbackServers workers = LoopbackServers.start(POOL, 0, 0, "1.0.0")) {
            Path pool = Files.createTempFile(logs, "fleet-service-pool-", ".txt");
            Files.write(pool, workers.endpoints().stream().map(WorkerEndpoint::url).toList());
            watchersAndCpu(plan, pool, report, logs);
            int coordinators = plan == Plan.QUICK ? 20 : 100;
            int fleet = plan == Plan.QUICK ? 200 : BIG_FLEET;
            coordinators(coordinators, fleet, workers, pool, report, logs);
        }
    }

    private static void watchersAndCpu(Plan plan, Path pool, Report report, Path logs) {
        int steps = steps(plan);
        try (ChildJvm service = ChildJvm.start("fleet-service", List.of("-Xmx1g", "-XX:+UseG1GC", "-Xlog:gc:stderr"),
                FleetServiceMain.class, List.of(pool.toString(), "defaults"), logs.resolve("fleet-service.log"));
             ChildJvm watchers = ChildJvm.start("fleet-watchers", List.of("-Xmx2g", "-XX:+UseParallelGC", "-Xlog:gc:stderr"),
                     FleetWatchersMain.class, List.of(service.awaitLine("PORT ")), logs.resolve("fleet-watchers.log"))) {
            ask(service, "fleet 0 " + SMALL_FLEET, "FLEET ");
            // Untimed: loads the classes and compiles the paths on both sides.
            open(watchers, CPU_WATCHERS);
            ask(service, "slide " + steps / 2 + " " + SMALL_FLEET, "PUBLISHED ");
            ask(watchers, "close", "CLOSED");

            long heapBefore = Long.parseLong(ask(service, "heap", "HEAP "));
            open(watchers, IDLE_WATCHERS);
            int counted = Integer.parseInt(ask(service, "watchers", "WATCHERS "));
            long heapAfter = Long.parseLong(ask(service, "heap", "HEAP "));
            double perWatcher = (heapAfter - heapBefore) / (double) IDLE_WATCHERS;
            int connections = (IDLE_WATCHERS + PER_CONNECTION - 1) / PER_CONNECTION;
            report.add(new Report.Row("14. retained heap per idle WatchFleet stream, " + Report.count(IDLE_WATCHERS)
                    + " streams over " + connections + " connections (service JVM, after GC)",
                    Report.bytes(perWatcher) + " (server counted " + Report.count(counted) + ")", "—", "—",
                    "≤ 32 KiB", Report.met(perWatcher <= 32 * 1024 && counted == IDLE_WATCHERS)));

            for (int n : WATCHERS) {
                if (n != IDLE_WATCHERS) {
                    open(watchers, n);
                }
                latency(n, steps, service, watchers, report);
                ask(watchers, "close", "CLOSED");
            }

            double[] small = cpuPerDelivery(SMALL_FLEET, steps / 2, service, watchers, false);
            double[] smallChanges = cpuPerDelivery(SMALL_FLEET, steps / 2, service, watchers, true);
            ask(service, "fleet 0 " + BIG_FLEET, "FLEET ");
            ask(service, "slide " + steps / 4 + " " + BIG_FLEET, "PUBLISHED "); // untimed: the bigger paths
            double[] big = cpuPerDelivery(BIG_FLEET, steps / 2, service, watchers, false);
            double[] bigChanges = cpuPerDelivery(BIG_FLEET, steps / 2, service, watchers, true);
            report.add(new Report.Row("14. service CPU per delivered snapshot, " + CPU_WATCHERS + " watchers, one"
                    + " worker changing among " + SMALL_FLEET + " / among " + Report.count(BIG_FLEET)
                    + " (service threads; [whole JVM])",
                    Report.duration(small[0]) + " / " + Report.duration(big[0]) + " (" + Report.duration(small[1])
                            + " / " + Report.duration(big[1]) + ")", "—", "—",
                    "flat: at " + Report.count(BIG_FLEET) + " ≤ 2 × at " + SMALL_FLEET,
                    Report.met(big[0] <= 2 * small[0])));
            report.add(new Report.Row("14. … one WatchFleet message (a whole snapshot) of " + SMALL_FLEET + " / of "
                    + Report.count(BIG_FLEET) + " workers", Report.bytes(messageBytes.getOrDefault(SMALL_FLEET, 0L))
                    + " / " + Report.bytes(messageBytes.getOrDefault(BIG_FLEET, 0L)), "—", "—", "measured", "—"));
            report.add(new Report.Row("14. service CPU per delivered snapshot, change messages (changes_only), "
                    + CPU_WATCHERS + " watchers, one worker changing among " + SMALL_FLEET + " / among "
                    + Report.count(BIG_FLEET) + " (service threads; [whole JVM])",
                    Report.duration(smallChanges[0]) + " / " + Report.duration(bigChanges[0]) + " ("
                            + Report.duration(smallChanges[1]) + " / " + Report.duration(bigChanges[1]) + ")", "—", "—",
                    "flat: at " + Report.count(BIG_FLEET) + " ≤ 2 × at " + SMALL_FLEET,
                    Report.met(bigChanges[0] <= 2 * smallChanges[0])));
            report.add(new Report.Row("14. … one WatchFleet change message of " + SMALL_FLEET + " / of "
                    + Report.count(BIG_FLEET) + " workers", Report.bytes(changeBytes.getOrDefault(SMALL_FLEET, 0L))
                    + " / " + Report.bytes(changeBytes.getOrDefault(BIG_FLEET, 0L)), "—", "—", "measured", "—"));
            report.note(String.format(Locale.ROOT, "Fleet service (14): %,d LoopbackServers workers in the harness"
                    + " JVM; the service (resolver on a push discovery, policy ^1.0.0, FleetServer with the defaults:"
                    + " max-watchers-per-connection %d) in a JVM of its own (-Xmx1g, G1); the watchers (plain grpc-java"
                    + " WatchFleet streams, %d per connection, directExecutor) in another. A step slides the fleet's"
                    + " window by one worker (one leaves at once, one joins after its probe) and waits for the"
                    + " snapshot; %d steps per watcher count, the next made once every watcher has the last."
                    + " Latency: receipt (watcher JVM, system clock µs) minus"
                    + " the snapshot's publishedAt; the in-process listener is a SnapshotListener of the service's"
                    + " resolver, timed the same way in the same steps. CPU per delivered snapshot: CPU time of the"
                    + " service's threads (rollcall-serve-*, and rollcall-listeners-* where it encodes each snapshot)"
                    + " over %d steps with %d watchers, ÷ the snapshots the watchers received; the whole JVM's"
                    + " process CPU likewise; the change-message row the same with streams opened with"
                    + " changes_only (the watchers count the messages, they do not apply them). Heap: used heap after System.gc() with %,d idle streams open minus"
                    + " before, ÷ %,d. Both JVMs log their GC pauses (fleet-service.log, fleet-watchers.log): on two"
                    + " shared cores, young pauses of tens of milliseconds are in the tails.", POOL, PER_CONNECTION,
                    PER_CONNECTION, steps, steps / 2, CPU_WATCHERS, IDLE_WATCHERS, IDLE_WATCHERS));
        }
    }

    private static void open(ChildJvm watchers, int n) {
        open(watchers, n, false);
    }

    private static void open(ChildJvm watchers, int n, boolean changes) {
        String open = ask(watchers, "open " + n + " " + PER_CONNECTION + (changes ? " changes" : ""), "");
        if (!open.startsWith("OPEN ")) {
            throw new IllegalStateException(n + " WatchFleet streams: " + open);
        }
    }

    /** {@code steps} slides with {@code n} watchers open: the rows of publish → seen. */
    private static void latency(int n, int steps, ChildJvm service, ChildJvm watchers, Report report) {
        List<Long> listener = new ArrayList<>();
        for (int i = 0; i < steps; i++) {
            // The next change once every watcher has this one: each publish's own delay, not a backlog's.
            String published = ask(service, "slide 1 " + SMALL_FLEET, "PUBLISHED ");
            String last = "";
            for (String p : published.split(",")) {
                String[] f = p.split(":");
                watchers.send("publish " + f[0] + " " + f[1]);
                listener.add(Long.parseLong(f[2]));
                last = f[0];
            }
            ask(watchers, "upto " + last, "UPTO ");
        }
        String[] answer = ask(watchers, "latencies", "LATENCIES ").split(" ", 2);
        long skipped = Long.parseLong(answer[0]);
        long[] seen = answer.length < 2 || answer[1].isEmpty() ? new long[0]
                : Arrays.stream(answer[1].split(",")).mapToLong(Long::parseLong).toArray();
        long[] local = listener.stream().mapToLong(Long::longValue).toArray();
        String who = Report.count(n) + (n == 1 ? " WatchFleet client" : " WatchFleet clients");
        long p50 = Latencies.percentile(seen, 50);
        long p99 = Latencies.percentile(seen, 99);
        long l50 = Latencies.percentile(local, 50);
        long l99 = Latencies.percentile(local, 99);
        String of = Report.count(local.length) + " publishes × " + Report.count(n);
        report.add(new Report.Row("14. publish → seen by " + who + ", median / p99 of " + of
                        + " (baseline: the in-process listener)",
                Report.duration(p50) + " / " + Report.duration(p99)
                        + (skipped > 0 ? " (" + Report.count(skipped) + " skipped: latest wins)" : ""),
                Report.duration(l50) + " / " + Report.duration(l99), Report.lessIsBetter(p99, l99),
                n == IDLE_WATCHERS ? "p99 ≤ 50 ms" : "—", n == IDLE_WATCHERS ? Report.met(p99 <= 50_000_000L) : "—"));
        String title = "Publish → seen, fleet of " + SMALL_FLEET + " workers, one change at a time";
        Charts.distribution("fleet-watch", title, "WatchFleet, " + who.replace(" WatchFleet", "").trim(), seen);
        if (n == IDLE_WATCHERS) {
            Charts.distribution("fleet-watch", title, "in-process listener (the floor)", local);
        }
    }

    /**
     * CPU per snapshot delivered to {@value #CPU_WATCHERS} watchers: of the service's threads (the
     * server's and the listener's that encodes) and of the whole service JVM (the resolver's probes and
     * snapshot builds too), in nanoseconds.
     */
    private static double[] cpuPerDelivery(int size, int steps, ChildJvm service, ChildJvm watchers,
                                           boolean changes) {
        open(watchers, CPU_WATCHERS, changes);
        long received0 = Long.parseLong(ask(watchers, "received", "RECEIVED "));
        String[] cpu0 = ask(service, "cpu", "CPU ").split(" ");
        String[] published = ask(service, "slide " + steps + " " + size, "PUBLISHED ").split(",");
        int publishes = published.length;
        // The last publish may still be on its way to some watchers: every one has it before the CPU is read.
        ask(watchers, "upto " + published[publishes - 1].split(":")[0], "UPTO ");
        String[] cpu1 = ask(service, "cpu", "CPU ").split(" ");
        long process = Long.parseLong(cpu1[0]) - Long.parseLong(cpu0[0]);
        long threads = Long.parseLong(cpu1[1]) - Long.parseLong(cpu0[1]);
        long delivered = Long.parseLong(ask(watchers, "received", "RECEIVED ")) - received0;
        (changes ? changeBytes : messageBytes).put(size, Long.parseLong(ask(watchers, "size", "SIZE ")));
        ask(watchers, "close", "CLOSED");
        System.out.printf(Locale.ROOT, "  fleet of %d%s: %d publishes, %d delivered, service threads' CPU %.1f ms,"
                + " the service JVM's %.1f ms%n", size, changes ? " (changes_only)" : "", publishes, delivered,
                threads / 1e6, process / 1e6);
        double per = Math.max(1, delivered);
        return new double[] {threads / per, process / per};
    }

    /** N coordinators following one service against N each embedding a resolver, over {@code size} workers. */
    private static void coordinators(int n, int size, LoopbackServers workers, Path pool, Report report, Path logs) {
        long probes0 = workers.probesAnswered();
        long accepted0 = workers.acceptedConnections();
        long workersCpu0 = workersCpu();
        long serviceCpu;
        long followersCpu;
        long serviceProbes;
        long serviceFailed;
        try (ChildJvm service = ChildJvm.start("fleet-service-closed", List.of("-Xmx1g", "-XX:+UseG1GC"),
                FleetServiceMain.class, List.of(pool.toString(), "closed"), logs.resolve("fleet-service-closed.log"));
             ChildJvm followers = ChildJvm.start("fleet-followers", List.of("-Xmx1g", "-XX:+UseParallelGC"),
                     FleetWatchersMain.class, List.of(service.awaitLine("PORT ")), logs.resolve("fleet-followers.log"))) {
            long s0 = Long.parseLong(ask(service, "cpu", "CPU ").split(" ")[0]);
            long f0 = Long.parseLong(ask(followers, "cpu", "CPU "));
            ask(service, "fleet 0 " + size, "FLEET ");
            String open = ask(followers, "open " + n + " 1", "");
            if (!open.startsWith("OPEN ")) {
                throw new IllegalStateException(n + " followers: " + open);
            }
            ask(followers, "compatible " + size, "COMPATIBLE");
            serviceCpu = Long.parseLong(ask(service, "cpu", "CPU ").split(" ")[0]) - s0;
            followersCpu = Long.parseLong(ask(followers, "cpu", "CPU ")) - f0;
            String[] probes = ask(service, "probes", "PROBES ").split(" ");
            serviceProbes = Long.parseLong(probes[0]);
            serviceFailed = Long.parseLong(probes[1]);
        }
        long followProbes = workers.probesAnswered() - probes0;
        long followConnections = workers.acceptedConnections() - accepted0;
        long followWorkersCpu = workersCpu() - workersCpu0;

        Map<String, Long> e;
        long probes1 = workers.probesAnswered();
        long accepted1 = workers.acceptedConnections();
        long workersCpu1 = workersCpu();
        try (ChildJvm embedded = ChildJvm.start("fleet-embedded", List.of("-Xmx2g", "-XX:+UseG1GC"),
                EmbeddedCoordinatorsMain.class, List.of(pool.toString(), String.valueOf(n), String.valueOf(size)),
                logs.resolve("fleet-embedded.log"))) {
            embedded.awaitLine("READY");
            embedded.send("go");
            e = Footprint.values(embedded.awaitLine("RESULT "));
        }
        long embeddedProbes = workers.probesAnswered() - probes1;
        long embeddedConnections = workers.acceptedConnections() - accepted1;
        long embeddedWorkersCpu = workersCpu() - workersCpu1;

        String who = n + " coordinators × " + Report.count(size) + " workers";
        // One fleet's worth: a probe per worker, and a retry for each probe that failed (a timeout on a loaded machine).
        long oneFleet = size + serviceFailed;
        String retried = serviceFailed > 0 ? " (" + Report.count(size) + " + " + Report.count(serviceFailed)
                + " retried)" : "";
        String embeddedRetried = e.get("failed") > 0 ? " (" + Report.count(e.get("failed")) + " failed and retried)" : "";
        report.add(new Report.Row("14. " + who + ": probes the workers answered, following one service (baseline:"
                        + " each embedding a resolver)", Report.count(followProbes) + retried,
                Report.count(embeddedProbes) + embeddedRetried, Report.lessIsBetter(followProbes, embeddedProbes),
                "= one fleet's worth (a probe per worker + retries), ×" + n + " fewer",
                Report.met(followProbes <= oneFleet && embeddedProbes >= (long) n * size)));
        report.add(new Report.Row("14. " + who + ": connections the workers accepted (same two; one per probe)",
                Report.count(followConnections), Report.count(embeddedConnections),
                Report.lessIsBetter(followConnections, embeddedConnections), "= one fleet's worth, ×" + n + " fewer",
                Report.met(followConnections <= oneFleet && embeddedConnections >= (long) n * size)));
        long followCpu = serviceCpu + followersCpu;
        report.add(new Report.Row("14. " + who + ": CPU seconds, coordinators' side + workers (same two)",
                seconds(followCpu) + " + " + seconds(followWorkersCpu) + " (service " + seconds(serviceCpu)
                        + ", followers " + seconds(followersCpu) + ")",
                seconds(e.get("cpu")) + " + " + seconds(embeddedWorkersCpu),
                Report.lessIsBetter(followCpu + followWorkersCpu, e.get("cpu") + embeddedWorkersCpu), "—", "—"));
        String chart = n + " coordinators, " + Report.count(size) + " workers";
        Charts.bar("fleet-service-followers", chart + ": what the workers bear", "count", "following one service",
                "probes", followProbes);
        Charts.bar("fleet-service-followers", chart + ": what the workers bear", "count", "each embedding a resolver",
                "probes", embeddedProbes);
        Charts.bar("fleet-service-followers", chart + ": what the workers bear", "count", "following one service",
                "connections accepted", followConnections);
        Charts.bar("fleet-service-followers", chart + ": what the workers bear", "count", "each embedding a resolver",
                "connections accepted", embeddedConnections);
        report.note(String.format(Locale.ROOT, "Fleet service (14, coordinators): %d coordinators over the first %,d"
                + " workers. Following: the service JVM converges (its resolver sent %,d probes, %,d failed) and %d WatchFleet"
                + " streams, one connection each, in a followers JVM wait until each lists all %,d; embedding: %d"
                + " resolvers in one JVM, started one after another, each once the one before had converged (at once,"
                + " on these 2 shared cores they time out each other's probes; on machines of their own they would"
                + " not), %,d probes, %,d failed, took %s. Both resolvers with keepProbeChannels(false) and"
                + " fetchSchemas(false) (the workers serve no reflection), so each probe is a connection of its own"
                + " (kept channels would hold %,d connections open for the"
                + " embedded side, %,d for the service). Probes and connections are the workers' own counts; CPU:"
                + " process CPU of the coordinators' JVMs during convergence (the service's and the followers'"
                + " JVMs started beforehand) + the workers' event-loop threads.", n, size, serviceProbes, serviceFailed,
                n, size, n, e.get("probes"), e.get("failed"), Report.duration(e.get("nanos")), (long) n * size, size));
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
    }

    /** CPU time of this JVM's worker threads ({@link LoopbackServers}' event loops), in nanoseconds. */
    private static long workersCpu() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null && info.getThreadName().startsWith("rollcall-bench-")) {
                sum += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
            }
        }
        return sum;
    }

    /** Sends {@code command} and returns the rest of the first line starting with {@code prefix}. */
    private static String ask(ChildJvm jvm, String command, String prefix) {
        jvm.send(command);
        return jvm.awaitLine(prefix);
    }
}
