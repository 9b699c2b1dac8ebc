package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Scenario 11, probe protocols: (a) convergence on {@link BigFleet}'s size with
 * {@code rollcall.probe.protocol=none} (versions from discovery's labels, nothing sent: compare with
 * scenario 9's probing run of the same size); (b) the {@code grpc-health} drain
 * ({@code setStatus(NOT_SERVING)} on a plain grpc-java server, pushed by {@code Health/Watch}) against
 * the {@code rollcall} one ({@code drain()} on a {@link RollcallWorker}, pushed by
 * {@code WatchWorkerInfo}), both until the worker is out of {@code workers()}, in this JVM on loopback.
 */
final class ProtocolRuns {

    private static final Duration WAIT = Duration.ofMinutes(5);

    private ProtocolRuns() {
    }

    /**
     * Runs both; {@code -Drollcall.bench.protocols.size=N} and {@code .drains=N} shrink them for a
     * smoke run (the full size is scenario 9's, for the comparison).
     */
    static void run(Plan plan, Report report) throws Exception {
        none(Integer.getInteger("rollcall.bench.protocols.size", BigFleet.size(plan)), report);
        drains(Integer.getInteger("rollcall.bench.protocols.drains", plan == Plan.QUICK ? 200 : 1_000), report);
    }

    private static void none(int size, Report report) throws Exception {
        List<WorkerEndpoint> candidates = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            // Nothing listens there: with none nothing is dialled, so nothing needs to.
            candidates.add(WorkerEndpoint.of(AddressFleetMain.address(i), 9)
                    .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, i % 10 == 0 ? "0.9.0" : "1.0.0")));
        }
        PushDiscovery discovery = new PushDiscovery();
        try (WorkerResolver r = WorkerResolver.builder().name("bench-none").discovery(discovery)
                .policy(VersionPolicy.rule(w -> w.version().equals("1.0.0") ? Verdict.accept() : Verdict.reject("old")))
                .probeProtocol("none").maxCandidates(size).build()) {
            long t0 = System.nanoTime();
            discovery.push(candidates);
            r.await(s -> s.counts().candidates() == size && s.counts().pending() == 0, WAIT);
            long took = System.nanoTime() - t0;
            report.add(new Report.Row("11. none: " + Report.count(size) + " candidates until every one has a verdict",
                    Report.duration(took), "see 9", "—", "—", "—"));
            report.add(new Report.Row("11. none: probes sent converging on " + Report.count(size),
                    Report.count(r.probesSent()), "see 9", "—", "0", Report.met(r.probesSent() == 0)));
        }
        report.note("Probe protocols (11a): the same size as scenario 9, with rollcall.probe.protocol=none: every"
                + " candidate carries rollcall.version from discovery, nothing is dialled (the addresses have no"
                + " servers); compare with 9's probing run. What none gives up is in docs/probe-protocols.md.");
    }

    private static void drains(int drains, Report report) throws Exception {
        HealthStatusManager health = new HealthStatusManager();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(health.getHealthService()).build().start();
        try (RollcallWorker worker = RollcallWorker.builder().version("1.0.0").start()) {
            WorkerEndpoint healthy = WorkerEndpoint.of("127.0.0.1", server.getPort())
                    .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.0.0"));
            long[] viaHealth = outTimes("grpc-health", healthy, drains,
                    out -> health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES,
                            out ? ServingStatus.NOT_SERVING : ServingStatus.SERVING));
            long[] viaRollcall = outTimes("rollcall", worker.endpoint(), drains, out -> {
                if (out) {
                    worker.drain();
                } else {
                    worker.resume();
                }
            });
            long h50 = Latencies.percentile(viaHealth, 50);
            long h99 = Latencies.percentile(viaHealth, 99);
            long r50 = Latencies.percentile(viaRollcall, 50);
            long r99 = Latencies.percentile(viaRollcall, 99);
            report.add(new Report.Row("11. grpc-health NOT_SERVING → out of workers(), median of " + drains
                    + " (baseline: rollcall drain())", Report.duration(h50), Report.duration(r50),
                    Report.lessIsBetter(h50, r50), "—", "—"));
            report.add(new Report.Row("11. grpc-health NOT_SERVING → out of workers(), p99 of " + drains
                    + " (baseline: rollcall drain())", Report.duration(h99), Report.duration(r99),
                    Report.lessIsBetter(h99, r99), "≤ 10 ms", Report.met(h99 <= TimeUnit.MILLISECONDS.toNanos(10))));
            report.note("Probe protocols (11b): a plain grpc-java server with grpc-services' HealthStatusManager,"
                    + " probed with rollcall.probe.protocol=grpc-health (Health/Watch pushes the state), against a"
                    + " RollcallWorker's drain() with the default protocol (WatchWorkerInfo pushes it); no refresh in"
                    + " either.");
        } finally {
            server.shutdownNow();
            server.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** Takes {@code endpoint} out and back in {@code n} times (after a warm-up); each time until it is out of {@code workers()}. */
    private static long[] outTimes(String protocol, WorkerEndpoint endpoint, int n, Consumer<Boolean> out)
            throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        try (WorkerResolver r = WorkerResolver.builder().name("bench-drain-" + protocol).discovery(discovery)
                .policy(VersionPolicy.rule(w -> Verdict.accept())).fetchSchemas(false).probeProtocol(protocol)
                .refreshInterval(Duration.ofHours(1)).build()) {
            discovery.push(List.of(endpoint));
            r.awaitWorkers(1, WAIT);
            QuietGap.await();
            long[] took = new long[n];
            for (int i = -Math.min(100, n); i < n; i++) {
                long t0 = System.nanoTime();
                out.accept(true);
                r.await(s -> !s.compatibleEndpoints().contains(endpoint), WAIT);
                if (i >= 0) {
                    took[i] = System.nanoTime() - t0;
                }
                out.accept(false);
                // Out and back in again and again, one worker flaps and is damped: leaving discovery and
                // coming back makes it a worker with no history, so that each time measures one change.
                discovery.push(List.of());
                r.await(s -> s.counts().candidates() == 0, WAIT);
                discovery.push(List.of(endpoint));
                r.await(s -> s.compatibleEndpoints().contains(endpoint), WAIT);
                QuietGap.await();
            }
            return took;
        }
    }
}
