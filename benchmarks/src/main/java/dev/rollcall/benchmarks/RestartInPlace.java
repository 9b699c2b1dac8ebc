package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 8, first part: 10 workers behind one channel ({@code round_robin}, 64 health checks in
 * flight continuously) are restarted in place one by one with a version the policy rejects: the
 * successor listens on the same port ({@code SO_REUSEPORT}), then the old one is killed
 * ({@code shutdownNow}). Counted on the workers' side: the calls that reach an incompatible
 * instance. Rollcall: a channel to {@code resolver.grpcTarget()}; baseline: grpc's own static list
 * of the same 10 addresses ({@link FixedAddresses}) with {@code round_robin}.
 */
final class RestartInPlace {

    static final int WORKERS = 10;
    static final int IN_FLIGHT = 64;
    private static final Duration WAIT = Duration.ofSeconds(20);
    /**
     * Kept so that the setting sticks (JUL holds loggers weakly): with every worker rejected, grpc logs
     * the resolver's UNAVAILABLE at WARNING on every resolution, which says nothing here.
     */
    private static final java.util.logging.Logger CHANNEL_LOG =
            java.util.logging.Logger.getLogger("io.grpc.internal.ManagedChannelImpl");

    /** Calls that reached an incompatible instance, and all calls that succeeded and failed. */
    record Tally(long incompatible, long ok, String failures, long stepMillis) {
    }

    private RestartInPlace() {
    }

    static void run(Plan plan, Report report) throws Exception {
        Duration dwell = Duration.ofMillis(plan == Plan.QUICK ? 300 : 1_000);
        CHANNEL_LOG.setLevel(java.util.logging.Level.SEVERE);
        Tally rollcall = restarts(true, dwell);
        Tally baseline = restarts(false, dwell);
        report.add(new Report.Row("8. " + WORKERS + " workers restarted in place with a rejected version, "
                + IN_FLIGHT + " calls in flight: calls that reached an incompatible instance",
                Report.count(rollcall.incompatible()) + " of " + Report.count(rollcall.ok()),
                Report.count(baseline.incompatible()) + " of " + Report.count(baseline.ok()) + " (static list)",
                "—", "0", Report.met(rollcall.incompatible() == 0)));
        report.note("Restart in place (8): 10 workers (WorkerService and gRPC health, epoll with SO_REUSEPORT) in"
                + " this JVM; one channel, " + IN_FLIGHT + " health checks always in flight. Each step starts the"
                + " successor (version 2.0.0, policy ^1.0.0) on the old one's port, kills the old one (shutdownNow), and"
                + " keeps calling for " + dwell.toMillis() + " ms (Rollcall: after the resolver has the successor"
                + " REJECTED, " + rollcall.stepMillis() + " ms a step on average in all). Counted on the workers' side"
                + " (\"x of y\": calls served by a 2.0.0 instance of all calls that succeeded). Rollcall:"
                + " forTarget(resolver.grpcTarget()), the rollcall_verified policy over round_robin; calls that did not"
                + " succeed (killed in flight; after the last step no compatible worker is left, and the calls"
                + " waiting for one are cancelled at the end): " + rollcall.failures()
                + ". Baseline: forTarget(\"fixed:///<the 10 addresses>\") (a 60-line NameResolverProvider: grpc-java"
                + " has no static multi-address scheme) with defaultLoadBalancingPolicy(\"round_robin\"); calls that"
                + " did not succeed: " + baseline.failures() + ".");
    }

    private static Tally restarts(boolean rollcall, Duration dwell) throws Exception {
        List<PlainWorker> old = new ArrayList<>();
        List<PlainWorker> successors = new ArrayList<>();
        WorkerResolver resolver = null;
        ManagedChannel channel = null;
        try {
            for (int i = 0; i < WORKERS; i++) {
                old.add(PlainWorker.start(0, "1.0.0"));
            }
            List<WorkerEndpoint> endpoints = old.stream().map(PlainWorker::endpoint).toList();
            ManagedChannelBuilder<?> b;
            if (rollcall) {
                PushDiscovery discovery = new PushDiscovery();
                resolver = WorkerResolver.builder().name("bench-last-mile").discovery(discovery)
                        .policy(SemverRangePolicy.of("^1.0.0")).refreshInterval(Duration.ofHours(1))
                        .fetchSchemas(false).build();
                discovery.push(endpoints);
                resolver.await(s -> s.counts().compatible() == WORKERS && s.counts().pending() == 0, WAIT);
                b = ManagedChannelBuilder.forTarget(resolver.grpcTarget());
            } else {
                b = ManagedChannelBuilder.forTarget(FixedAddresses.target(endpoints))
                        .defaultLoadBalancingPolicy("round_robin");
            }
            channel = b.usePlaintext().build();
            long steps = 0;
            try (CallLoad load = CallLoad.start(channel, IN_FLIGHT)) {
                await(() -> old.stream().allMatch(w -> w.calls() > 20) && load.ok() > 1_000);
                for (int i = 0; i < WORKERS; i++) {
                    long t0 = System.nanoTime();
                    PlainWorker gone = old.get(i);
                    successors.add(start(gone.port(), "2.0.0"));
                    gone.kill();
                    if (resolver != null) {
                        String url = gone.endpoint().url();
                        resolver.await(s -> s.status(url).map(st -> st.state() == State.REJECTED).orElse(false), WAIT);
                    }
                    long since = System.nanoTime();
                    org.awaitility.Awaitility.await("a step's dwell").pollDelay(dwell).atMost(dwell.plusSeconds(5))
                            .until(() -> System.nanoTime() - since >= dwell.toNanos());
                    steps += System.nanoTime() - t0;
                }
                load.stop();
                channel.shutdownNow(); // calls still waiting for a compatible worker end now, not at their deadline
                load.close();
                long incompatible = successors.stream().mapToLong(PlainWorker::calls).sum();
                return new Tally(incompatible, load.ok(), load.failures(), TimeUnit.NANOSECONDS.toMillis(steps / WORKERS));
            }
        } finally {
            if (channel != null) {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            if (resolver != null) {
                resolver.close();
            }
            old.forEach(PlainWorker::kill);
            successors.forEach(PlainWorker::kill);
        }
    }

    /** The port of a worker killed a moment ago may take a few tries (with SO_REUSEPORT it is free at once). */
    private static PlainWorker start(int port, String version) throws IOException {
        for (int attempt = 0; ; attempt++) {
            try {
                return PlainWorker.start(port, version);
            } catch (IOException taken) {
                if (attempt == 100) {
                    throw taken;
                }
                Thread.onSpinWait();
            }
        }
    }

    private static void await(java.util.concurrent.Callable<Boolean> done) {
        org.awaitility.Awaitility.await("calls to every worker").atMost(WAIT).pollInterval(Duration.ofMillis(5))
                .until(done);
    }
}
