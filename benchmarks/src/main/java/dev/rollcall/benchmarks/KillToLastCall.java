package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 8, second part: the time from a worker killed with {@code SIGKILL} (a JVM of its own) to
 * the last call a coordinator sends it. The coordinator calls the way a query engine fans out: 8
 * threads, each taking the next worker of {@code resolver.pin().compatibleEndpoints()} in turn and
 * calling it (a health check) over its own channel to that worker, with or without
 * {@code resolver.callObserver()} on those channels; the resolver with {@code keepProbeChannels(false)}
 * (nothing but the calls can tell it) and with its defaults (a kept connection per worker). Ten
 * more workers in this JVM keep the fleet at 11, so that the rate limit (a tenth of the fleet at
 * once) lets one ejection through.
 */
final class KillToLastCall {

    private static final int FLEET = 10;
    private static final int CALLERS = 8;
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** How long after the worker left the snapshot a call planned before may still go out. */
    private static final long SETTLE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** Small and quick to start: one JVM per kill. */
    private static final List<String> VICTIM_JVM = List.of("-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Xss256k");

    /** Times from kill to last call (ns); {@code censored}: still sending when the window closed. */
    record Kills(long[] nanos, int censored, long windowNanos, long[] goneNanos) {
        String median() {
            long m = Latencies.percentile(nanos, 50);
            return censored > nanos.length / 2 ? "still sending after " + Report.duration(windowNanos)
                    : Report.duration(m);
        }
    }

    private KillToLastCall() {
    }

    static void run(Plan plan, Report report, Path logs) throws Exception {
        int kills = plan == Plan.QUICK ? 8 : 30;
        List<PlainWorker> fleet = new ArrayList<>();
        try {
            for (int i = 0; i < FLEET; i++) {
                fleet.add(PlainWorker.start(0, "1.0.0"));
            }
            Duration window = Duration.ofSeconds(1);
            List<String> jvm = classArchive(logs);
            Kills quietObserved = kills(fleet, false, true, kills, window, jvm, logs);
            Kills quietAlone = kills(fleet, false, false, 3, window, jvm, logs);
            Kills keptObserved = kills(fleet, true, true, kills, window, jvm, logs);
            Kills keptAlone = kills(fleet, true, false, kills, window, jvm, logs);
            int viaTarget = plan == Plan.QUICK ? 6 : 20;
            Kills target = kills(fleet, true, false, true, viaTarget, window, jvm, logs);
            long[] gone = java.util.stream.Stream.of(quietObserved, quietAlone, keptObserved, keptAlone, target)
                    .flatMapToLong(k -> Arrays.stream(k.goneNanos())).toArray();
            report.add(new Report.Row("8. worker killed (SIGKILL) → last call sent to it, `keepProbeChannels(false)`:"
                    + " with `callObserver()` / without (median of " + kills + " / 3)",
                    quietObserved.median(), quietAlone.median(),
                    quietAlone.censored() > 0 ? "—" : Report.lessIsBetter(median(quietObserved), median(quietAlone)),
                    "—", "—"));
            report.add(new Report.Row("8. worker killed (SIGKILL) → last call sent to it, channels kept (default):"
                    + " with `callObserver()` / without (median of " + kills + ")",
                    keptObserved.median(), keptAlone.median(),
                    Report.lessIsBetter(median(keptObserved), median(keptAlone)), "—", "—"));
            report.add(new Report.Row("8. worker killed (SIGKILL) → last call sent to it through a `rollcall:` channel"
                    + " (default resolver, no observer; median of " + viaTarget + ")", target.median(), "—", "—", "—",
                    "—"));
            report.note(String.format(Locale.ROOT, "Kill to last call (8): a worker in a JVM of its own (one per kill,"
                    + " started before the measurement) is killed with SIGKILL while %d coordinator threads call the"
                    + " compatible workers of the current snapshot in turn (a health check each, over one channel per"
                    + " worker, 11 workers); the time runs from the kill to the last call started towards it, read"
                    + " %d ms after it left the snapshot. The killed process is gone (waitFor returns) %s after the kill"
                    + " (median of all %d kills). p90 with / without the observer: channels not kept %s / %s,"
                    + " kept %s / %s. Without the observer and without kept channels nothing tells the resolver: the"
                    + " coordinator keeps calling the dead worker (each call refused at once) until the next refresh"
                    + " (probe.refresh-interval, 10 min by default); the window here closes after %s."
                    + " Through a rollcall: channel the same %d threads call through one channel (round_robin behind the"
                    + " rollcall_verified gate); a stream tracer notes the worker each call's stream is created on; p90 %s.",
                    CALLERS, TimeUnit.NANOSECONDS.toMillis(SETTLE_NANOS), Report.duration(Latencies.median(gone)),
                    gone.length, p90(quietObserved), p90(quietAlone), p90(keptObserved), p90(keptAlone),
                    Report.duration(window.toNanos()), CALLERS, p90(target)));
        } finally {
            fleet.forEach(PlainWorker::kill);
        }
    }

    private static long median(Kills k) {
        return Latencies.percentile(k.nanos(), 50);
    }

    private static String p90(Kills k) {
        return k.censored() > k.nanos().length / 10 ? "≥ " + Report.duration(k.windowNanos())
                : Report.duration(Latencies.percentile(k.nanos(), 90));
    }

    /**
     * JVM options for the victims: a class-data archive dumped by one that started and exited normally
     * (about a third less CPU to start each of the next ones, which start many at once).
     */
    private static List<String> classArchive(Path logs) {
        Path archive = logs.resolve("victim-classes.jsa").toAbsolutePath();
        List<String> dump = new ArrayList<>(VICTIM_JVM);
        dump.add("-XX:ArchiveClassesAtExit=" + archive);
        try (ChildJvm once = ChildJvm.start("victim-archive", dump, Bench.class,
                List.of("--child", "plain-worker", "1.0.0"), logs.resolve("victims.log"))) {
            once.awaitLine("PORT ");
        }
        List<String> options = new ArrayList<>(VICTIM_JVM);
        if (java.nio.file.Files.isRegularFile(archive)) {
            options.add("-XX:SharedArchiveFile=" + archive);
        }
        return options;
    }

    private static Kills kills(List<PlainWorker> fleet, boolean keep, boolean observed, int kills, Duration window,
                               List<String> jvm, Path logs) throws Exception {
        return kills(fleet, keep, observed, false, kills, window, jvm, logs);
    }

    /** {@code throughTarget}: the coordinator's threads call through one channel to {@code resolver.grpcTarget()}. */
    private static Kills kills(List<PlainWorker> fleet, boolean keep, boolean observed, boolean throughTarget,
                               int kills, Duration window, List<String> jvm, Path logs) throws Exception {
        String name = (throughTarget ? "target-" : "") + (keep ? "kept" : "quiet")
                + (observed ? "-observed" : "-alone");
        List<ChildJvm> victims = new ArrayList<>();
        List<WorkerEndpoint> endpoints = new ArrayList<>();
        PushDiscovery discovery = new PushDiscovery();
        List<WorkerEndpoint> live = fleet.stream().map(PlainWorker::endpoint).toList();
        try (WorkerResolver resolver = WorkerResolver.builder().name("bench-kill-" + name).discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0.0")).keepProbeChannels(keep).fetchSchemas(false).build();
             Coordinator coordinator = new Coordinator(resolver, observed, throughTarget)) {
            long spawn = System.nanoTime();
            for (int i = 0; i < kills; i++) { // all at once, before any measurement: none starts during one
                victims.add(ChildJvm.start("victim-" + name + "-" + i, jvm, Bench.class,
                        List.of("--child", "plain-worker", "1.0.0"), logs.resolve("victims.log")));
            }
            for (ChildJvm v : victims) {
                endpoints.add(WorkerEndpoint.of("127.0.0.1", Integer.parseInt(v.awaitLine("PORT "))));
            }
            warm(endpoints);
            spawn = System.nanoTime() - spawn;
            long measuring = System.nanoTime();
            discovery.push(live);
            resolver.awaitWorkers(FLEET, WAIT);
            coordinator.start();
            long[] out = new long[kills];
            long[] gone = new long[kills];
            int censored = 0;
            for (int i = 0; i < kills; i++) {
                WorkerEndpoint victim = endpoints.get(i);
                List<WorkerEndpoint> with = new ArrayList<>(live);
                with.add(victim);
                discovery.push(with);
                resolver.await(s -> s.compatibleEndpoints().contains(victim), WAIT);
                AtomicLong sent = coordinator.watch(victim);
                long before = coordinator.calls(victim);
                await(() -> coordinator.calls(victim) >= before + 20, WAIT);
                long t0 = System.nanoTime();
                victims.get(i).kill();
                gone[i] = System.nanoTime() - t0;
                boolean out0 = awaitQuietly(() -> !resolver.pin().compatibleEndpoints().contains(victim), window);
                if (out0) {
                    long left = System.nanoTime();
                    await(() -> System.nanoTime() - left >= SETTLE_NANOS, WAIT);
                    out[i] = Math.max(0, sent.get() - t0);
                } else {
                    out[i] = window.toNanos();
                    censored++;
                }
                discovery.push(live);
                resolver.await(s -> s.status(victim.url()).isEmpty(), WAIT);
            }
            System.out.println("  " + name + ": " + Arrays.toString(Arrays.stream(out).map(n -> n / 1_000).toArray())
                    + " µs, " + censored + String.format(Locale.ROOT,
                    " still sending (%d JVMs started in %.1f s, measured in"
                    + " %.1f s)", kills, spawn / 1e9, (System.nanoTime() - measuring) / 1e9));
            return new Kills(out, censored, window.toNanos(), gone);
        } finally {
            victims.forEach(ChildJvm::close);
        }
    }

    /**
     * A few calls to every victim at once, so that each JVM has loaded and compiled its serving path
     * before its turn (a cold one takes hundreds of milliseconds over its first calls, one kill after
     * the other).
     */
    private static void warm(List<WorkerEndpoint> victims) throws InterruptedException {
        List<ManagedChannel> channels = new ArrayList<>();
        List<com.google.common.util.concurrent.ListenableFuture<?>> calls = new ArrayList<>();
        for (WorkerEndpoint v : victims) {
            ManagedChannel c = ManagedChannelBuilder.forAddress(v.host(), v.port()).usePlaintext().build();
            channels.add(c);
            for (int i = 0; i < 20; i++) {
                calls.add(HealthGrpc.newFutureStub(c).withDeadlineAfter(20, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.getDefaultInstance()));
            }
        }
        for (var call : calls) {
            try {
                call.get();
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("a victim did not answer its warm-up call", e.getCause());
            }
        }
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static void await(java.util.concurrent.Callable<Boolean> done, Duration atMost) {
        org.awaitility.Awaitility.await("a kill step").atMost(atMost).pollInterval(Duration.ofMillis(1)).until(done);
    }

    private static boolean awaitQuietly(java.util.concurrent.Callable<Boolean> done, Duration atMost) {
        try {
            await(done, atMost);
            return true;
        } catch (org.awaitility.core.ConditionTimeoutException stillThere) {
            return false;
        }
    }

    /**
     * The coordinator: {@value #CALLERS} threads, each calling the next worker of the current
     * snapshot over that worker's own channel (built on first use, with the resolver's call observer
     * or without). Records when a call to the watched worker was last started. Or, through a target:
     * the threads call through one channel to {@code resolver.grpcTarget()}, and a stream tracer
     * records the worker each call's stream was created on (its remote address).
     */
    private static final class Coordinator implements AutoCloseable {
        private final WorkerResolver resolver;
        private final boolean observed;
        private final ManagedChannel target;
        private final Map<WorkerEndpoint, ManagedChannel> channels = new ConcurrentHashMap<>();
        private final Map<WorkerEndpoint, AtomicLong> calls = new ConcurrentHashMap<>();
        private final AtomicInteger turn = new AtomicInteger();
        private final List<Thread> threads = new ArrayList<>();
        private volatile WorkerEndpoint watched;
        private volatile AtomicLong lastSent = new AtomicLong();
        private volatile boolean stopped;

        Coordinator(WorkerResolver resolver, boolean observed, boolean throughTarget) {
            this.resolver = resolver;
            this.observed = observed;
            if (throughTarget) {
                ManagedChannelBuilder<?> b = ManagedChannelBuilder.forTarget(resolver.grpcTarget()).usePlaintext()
                        .intercept(new SentTo());
                if (observed) {
                    b.intercept(resolver.callObserver());
                }
                target = b.build();
            } else {
                target = null;
            }
        }

        void start() {
            for (int i = 0; i < CALLERS; i++) {
                Thread t = new Thread(this::loop, "rollcall-bench-coordinator-" + i);
                t.setDaemon(true);
                t.start();
                threads.add(t);
            }
        }

        /** From now on, {@code worker}'s last call start time (nanoTime) goes into the returned value. */
        AtomicLong watch(WorkerEndpoint worker) {
            AtomicLong sent = new AtomicLong();
            lastSent = sent;
            watched = worker;
            return sent;
        }

        long calls(WorkerEndpoint worker) {
            AtomicLong n = calls.get(worker);
            return n == null ? 0 : n.get();
        }

        private void loop() {
            HealthCheckRequest check = HealthCheckRequest.getDefaultInstance();
            while (!stopped && target != null) {
                try {
                    HealthGrpc.newBlockingStub(target).withDeadlineAfter(5, TimeUnit.SECONDS).check(check);
                } catch (RuntimeException failed) {
                    // killed in flight
                }
            }
            while (!stopped) {
                List<WorkerEndpoint> workers = resolver.pin().compatibleEndpoints();
                if (workers.isEmpty()) {
                    Thread.onSpinWait();
                    continue;
                }
                WorkerEndpoint w = workers.get(Math.floorMod(turn.getAndIncrement(), workers.size()));
                if (w.equals(watched)) {
                    lastSent.set(System.nanoTime());
                }
                calls.computeIfAbsent(w, k -> new AtomicLong()).incrementAndGet();
                try {
                    HealthGrpc.newBlockingStub(channel(w)).withDeadlineAfter(5, TimeUnit.SECONDS).check(check);
                } catch (RuntimeException failed) {
                    // a dead worker's calls fail; the resolver hears of it through the observer, or not
                }
            }
        }

        private ManagedChannel channel(WorkerEndpoint w) {
            return channels.computeIfAbsent(w, k -> {
                ManagedChannelBuilder<?> b = ManagedChannelBuilder.forAddress(k.host(), k.port()).usePlaintext();
                if (observed) {
                    b.intercept(resolver.callObserver());
                }
                return b.build();
            });
        }

        @Override
        public void close() throws InterruptedException {
            stopped = true;
            for (Thread t : threads) {
                t.join(10_000);
            }
            for (ManagedChannel c : channels.values()) {
                c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            if (target != null) {
                target.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }

        /** Through the target: notes the worker each call's stream goes to, as the stream is created on its connection. */
        private final class SentTo extends io.grpc.ClientStreamTracer.Factory implements io.grpc.ClientInterceptor {
            @Override
            public <Q, R> io.grpc.ClientCall<Q, R> interceptCall(io.grpc.MethodDescriptor<Q, R> method,
                                                                 io.grpc.CallOptions options, io.grpc.Channel next) {
                return next.newCall(method, options.withStreamTracerFactory(this));
            }

            @Override
            public io.grpc.ClientStreamTracer newClientStreamTracer(io.grpc.ClientStreamTracer.StreamInfo info,
                                                                    io.grpc.Metadata headers) {
                return new io.grpc.ClientStreamTracer() {
                    @Override
                    public void streamCreated(io.grpc.Attributes transport, io.grpc.Metadata headers) {
                        if (transport.get(io.grpc.Grpc.TRANSPORT_ATTR_REMOTE_ADDR)
                                instanceof java.net.InetSocketAddress a) {
                            WorkerEndpoint w = WorkerEndpoint.of("127.0.0.1", a.getPort());
                            if (w.equals(watched)) {
                                lastSent.set(System.nanoTime());
                            }
                            calls.computeIfAbsent(w, k -> new AtomicLong()).incrementAndGet();
                        }
                    }
                };
            }
        }
    }

    /** In a child JVM: one plain worker on an ephemeral port; prints {@code PORT n}; lives until killed or stdin ends. */
    static void childMain(String version) throws Exception {
        try (PlainWorker w = PlainWorker.start(0, version)) {
            System.out.println("PORT " + w.port());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (in.readLine() != null) {
                // nothing to answer: it waits to be killed
            }
        }
    }
}
