package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.RollcallMetrics;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Scenario 13 (a study, run with {@code --only 13}, not in the default set): how a probe's latency
 * while converging on 10,000 workers depends on how many probes are in flight, on this machine,
 * where the workers' JVMs share the coordinator's two cores. Side by side, each rep in another order:
 * the floor as scenario 2 runs it (a permit, then the channel and the call, on the scenario thread),
 * the floor keeping 24, 32, 48 or 64 probes in flight at every moment (channels built ahead on the
 * scenario thread, each call started the moment a place is free), and Rollcall with
 * {@code probe.concurrency} 32 and 64 (the default). Scenario 2's probe p99 row compares Rollcall's
 * 64 places, of which it keeps about 61 busy, with the floor's, which keeps 47–54 busy: its thread
 * waits for a core each time a permit comes back.
 */
final class ProbeConcurrency {

    private static final List<Integer> FLOOR_PLACES = List.of(24, 32, 48, 64);
    private static final List<Integer> ROLLCALL_PLACES = List.of(32, 64);

    /** One convergence: its time, its probes' p50 and p99, and their latencies added up (nanoseconds). */
    private record Run(long nanos, long p50, long p99, long probeNanos) {
        double inFlight() {
            return probeNanos / (double) nanos;
        }
    }

    private ProbeConcurrency() {
    }

    static void run(Plan plan, Report report, Path logs) throws Exception {
        int reps = plan == Plan.QUICK ? 2 : 4;
        try (ServerFleets fleets = ServerFleets.start(Plan.LARGE, Convergence.VERSION, logs)) {
            List<WorkerEndpoint> fleet = fleets.endpoints();
            // Every side in the order discovery hands the set to Rollcall, as scenario 2's floor probes.
            List<WorkerEndpoint> ordered = Convergence.inDiscoveryOrder(fleet);
            for (int w = 0; w < 3; w++) { // the JIT's and the workers' JVMs' warm-up, untimed
                PlainGrpcFloor.converge(ordered);
                Convergence.settle();
                pipelined(ordered, 64);
                Convergence.settle();
                rollcall(fleet, 64);
                Convergence.settle();
            }
            Map<String, List<Run>> runs = new LinkedHashMap<>();
            List<String> sides = new ArrayList<>();
            sides.add("floor");
            FLOOR_PLACES.forEach(p -> sides.add("floor " + p));
            ROLLCALL_PLACES.forEach(p -> sides.add("rollcall " + p));
            sides.forEach(s -> runs.put(s, new ArrayList<>()));
            for (int r = 0; r < reps; r++) {
                for (int k = 0; k < sides.size(); k++) {
                    String side = sides.get((r * 3 + k) % sides.size());
                    // As scenario 2 between its runs: the workers' JVMs done with the run before (the streams and
                    // connections it closed), a GC here and there.
                    Convergence.settle();
                    fleets.collectGarbage();
                    Run run = side.equals("floor") ? floor(ordered)
                            : side.startsWith("floor ") ? pipelined(ordered, Integer.parseInt(side.substring(6)))
                            : rollcall(fleet, Integer.parseInt(side.substring(9)));
                    runs.get(side).add(run);
                    System.out.printf(Locale.ROOT, "    %s: %.0f ms, probe p50 / p99 %.1f / %.1f ms, %.1f in flight%n",
                            side, run.nanos() / 1e6, run.p50() / 1e6, run.p99() / 1e6, run.inFlight());
                }
            }
            for (String side : sides) {
                List<Run> of = runs.get(side);
                report.add(new Report.Row("13. converging on 10,000 (kept channels), by probes in flight: " + label(side)
                        + " (median of " + of.size() + "; time / probe p50 / p99 / in flight on average)",
                        Report.duration(median(of, Run::nanos)) + " / " + Report.duration(median(of, Run::p50)) + " / "
                                + Report.duration(median(of, Run::p99)) + " / " + String.format(Locale.ROOT, "%.1f",
                                of.stream().mapToDouble(Run::inFlight).sorted().toArray()[of.size() / 2]),
                        "—", "—", "—", "—"));
            }
            report.note("Probe concurrency (13): one server fleet of 10,000 workers in 3 JVMs on the same 2 cores; each"
                    + " rep runs every side once, in another order, each once the workers' JVMs are done with the run"
                    + " before (as scenario 2's runs), all probing in the order discovery hands the set to Rollcall. A"
                    + " probe's time runs to its first answer from its call's start: for the floor keeping N in flight"
                    + " after its channel's build, for scenario 2's floor and for Rollcall before it. In flight: the"
                    + " probes' times added up over the convergence's (Little's law).");
        }
    }

    private static String label(String side) {
        return side.equals("floor") ? "the floor as scenario 2 runs it (a permit of 64, then the channel and the call)"
                : side.startsWith("floor ") ? "the floor keeping " + side.substring(6) + " in flight"
                : "Rollcall, probe.concurrency " + side.substring(9);
    }

    private static long median(List<Run> runs, java.util.function.ToLongFunction<Run> of) {
        return Latencies.median(runs.stream().mapToLong(of).toArray());
    }

    private static Run floor(List<WorkerEndpoint> fleet) throws InterruptedException {
        Latencies latencies = new Latencies();
        long nanos = PlainGrpcFloor.converge(fleet, PlainGrpcFloor.Call.UNARY, null, latencies, null);
        return new Run(nanos, latencies.percentile(50), latencies.percentile(99), latencies.sum());
    }

    /**
     * Plain grpc-java's unary {@code WorkerInfo} to every worker, {@code places} in flight at every
     * moment while any is left: this thread builds the channels (up to {@code places} ahead), and a
     * call starts the moment one is built and a place is free, on the thread that frees the place or
     * brings the channel.
     */
    private static Run pipelined(List<WorkerEndpoint> fleet, int places) throws InterruptedException {
        EventLoopGroup loop = new MultiThreadIoEventLoopGroup(2, new DefaultThreadFactory("plain-grpc", true),
                NioIoHandler.newFactory());
        List<ManagedChannel> channels = new ArrayList<>(fleet.size());
        Latencies latencies = new Latencies();
        try {
            CountDownLatch answered = new CountDownLatch(fleet.size());
            Places free = new Places(places);
            long start = System.nanoTime();
            for (WorkerEndpoint endpoint : fleet) {
                ManagedChannel channel = PlainGrpcFloor.channel(endpoint, PlainGrpcFloor.Call.UNARY, loop);
                channels.add(channel);
                free.offer(() -> {
                    long probeStart = System.nanoTime();
                    ClientCalls.asyncUnaryCall(channel.newCall(WorkerServiceGrpc.getWorkerInfoMethod(),
                            CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS)),
                            WorkerInfoRequest.getDefaultInstance(),
                            new StreamObserver<WorkerInfoResponse>() {
                                @Override
                                public void onNext(WorkerInfoResponse value) {
                                }

                                @Override
                                public void onError(Throwable t) {
                                    onCompleted();
                                }

                                @Override
                                public void onCompleted() {
                                    latencies.add(System.nanoTime() - probeStart);
                                    answered.countDown();
                                    free.freed();
                                }
                            });
                });
            }
            if (!answered.await(2, TimeUnit.MINUTES)) {
                throw new IllegalStateException("plain grpc-java (" + places + " in flight): probes unanswered"
                        + " after 2 minutes");
            }
            long nanos = System.nanoTime() - start;
            return new Run(nanos, latencies.percentile(50), latencies.percentile(99), latencies.sum());
        } finally {
            PlainGrpcFloor.closeAll(channels, loop);
        }
    }

    /**
     * Probes ready to start, {@code places} at most in flight: one starts the moment it is offered
     * and a place is free, or a place comes back and one is waiting. {@link #offer} blocks while as
     * many wait as there are places.
     */
    private static final class Places {
        private final ConcurrentLinkedQueue<Runnable> ready = new ConcurrentLinkedQueue<>();
        private final AtomicInteger free;
        private final Semaphore room;

        Places(int places) {
            free = new AtomicInteger(places);
            room = new Semaphore(places);
        }

        void offer(Runnable probe) throws InterruptedException {
            room.acquire();
            ready.add(probe);
            startWhatCan();
        }

        /** A probe in flight is over: its place is free. Any thread. */
        void freed() {
            free.incrementAndGet();
            startWhatCan();
        }

        private void startWhatCan() {
            while (!ready.isEmpty()) {
                int f = free.get();
                if (f == 0) {
                    return; // the next freed() starts it
                }
                if (!free.compareAndSet(f, f - 1)) {
                    continue;
                }
                Runnable probe = ready.poll();
                if (probe == null) {
                    free.incrementAndGet(); // another thread took it meanwhile; look again
                    continue;
                }
                room.release();
                probe.run();
            }
        }
    }

    /** A new resolver with {@code probe.concurrency} {@code places} converges on {@code fleet}, every channel kept. */
    private static Run rollcall(List<WorkerEndpoint> fleet, int places) throws Exception {
        PushDiscovery discovery = new PushDiscovery("push[benchmark]");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(Convergence.PERCENTILES);
        try (WorkerResolver resolver = WorkerResolver.builder().name("bench-concurrency-" + places).discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0.0")).probeConcurrency(places).maxKeptChannels(fleet.size()).build()) {
            new RollcallMetrics(resolver).bindTo(registry);
            long start = System.nanoTime();
            discovery.push(fleet);
            resolver.await(s -> s.counts().compatible() == fleet.size(), Convergence.TIMEOUT);
            long nanos = System.nanoTime() - start;
            Timer probes = registry.get("rollcall.probe.latency").tag("outcome", "answered").timer();
            HistogramSnapshot h = probes.takeSnapshot();
            return new Run(nanos, Convergence.percentile(h, 0.5), Convergence.percentile(h, 0.99),
                    (long) probes.totalTime(TimeUnit.NANOSECONDS));
        }
    }
}
