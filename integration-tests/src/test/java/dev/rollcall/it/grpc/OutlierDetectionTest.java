package dev.rollcall.it.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.KeyRouting;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.grpc.CallKeys;
import dev.rollcall.grpc.KeyAffinityLoadBalancerProvider;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.protobuf.services.HealthStatusManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * gRPC's own outlier detection (gRFC A50) beneath the {@code rollcall_verified} gate of a real
 * {@code rollcall:} channel, against five real workers on loopback. The "user call" is gRPC health's
 * {@code Check}; each worker counts the calls that reach it, and a server interceptor makes the
 * failures ({@code UNAVAILABLE}). Intervals are short through the {@code rollcall.calls.outlier-detection.*}
 * keys; ejection is seen from the counts alone (a window of calls that never reaches a worker).
 */
class OutlierDetectionTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String OD = "rollcall.calls.outlier-detection.";
    @AutoClose
    private final Closer open = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    /** Counts the health checks that reach it, and fails those {@code failing} picks with UNAVAILABLE. */
    private static final class Faulty implements ServerInterceptor {
        final AtomicLong calls = new AtomicLong();
        private final LongPredicate failing;

        Faulty(LongPredicate failing) {
            this.failing = failing;
        }

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                          ServerCallHandler<Q, R> next) {
            if (!call.getMethodDescriptor().getServiceName().equals("grpc.health.v1.Health")) {
                return next.startCall(call, headers);
            }
            if (failing.test(calls.incrementAndGet())) {
                call.close(Status.UNAVAILABLE.withDescription("made to fail"), new Metadata());
                return new ServerCall.Listener<>() {
                };
            }
            return next.startCall(call, headers);
        }
    }

    private record Worker(WorkerEndpoint endpoint, Faulty faulty) {
        long calls() {
            return faulty.calls.get();
        }
    }

    private Worker worker(LongPredicate failing) throws Exception {
        Faulty faulty = new Faulty(failing);
        RollcallWorker w = open.add(RollcallWorker.builder().version("1.0.0").intercept(faulty)
                .service(new HealthStatusManager().getHealthService()).start());
        return new Worker(w.endpoint(), faulty);
    }

    private static Worker[] fleet(Worker first, Worker... rest) {
        List<Worker> all = new ArrayList<>(List.of(first));
        all.addAll(List.of(rest));
        return all.toArray(Worker[]::new);
    }

    /** Short intervals; both of gRPC's algorithms judge a worker after a few calls. */
    private static Map<String, String> eager(Map<String, String> more) {
        Map<String, String> keys = new HashMap<>(Map.of(
                OD + "interval", "300ms",
                OD + "base-ejection-time", "3s",
                OD + "success-rate.request-volume", "10",
                OD + "failure-percentage.request-volume", "10",
                OD + "failure-percentage.threshold", "40",
                OD + "max-ejection-percent", "20"));
        keys.putAll(more);
        return keys;
    }

    private WorkerResolver resolver(Map<String, String> keys, Worker... workers) throws Exception {
        WorkerResolver r = open.add(WorkerResolver.builder().config(RollcallConfig.of(keys)).discovery(discovery)
                .policy(w -> Verdict.accept()).refreshInterval(Duration.ofHours(1)).fetchSchemas(false).build());
        discovery.push(List.of(workers).stream().map(Worker::endpoint).toList());
        r.awaitWorkers(workers.length, Duration.ofSeconds(20));
        return r;
    }

    private ManagedChannel channel(WorkerResolver r) {
        ManagedChannel c = ManagedChannelBuilder.forTarget(r.grpcTarget()).usePlaintext().build();
        open.add(() -> c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return c;
    }

    /** Makes {@code n} calls, failed ones included; how many reached each worker. */
    private static long[] window(ManagedChannel channel, int n, Worker... workers) {
        long[] before = new long[workers.length];
        for (int i = 0; i < workers.length; i++) {
            before[i] = workers[i].calls();
        }
        HealthGrpc.HealthBlockingStub stub = HealthGrpc.newBlockingStub(channel);
        for (int i = 0; i < n; i++) {
            try {
                stub.withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
            } catch (StatusRuntimeException failed) {
                // the worker's made-up failure: counted on its side
            }
        }
        long[] reached = new long[workers.length];
        for (int i = 0; i < workers.length; i++) {
            reached[i] = workers[i].calls() - before[i];
        }
        return reached;
    }

    private static int workersReached(long[] window) {
        int n = 0;
        for (long calls : window) {
            n += calls > 0 ? 1 : 0;
        }
        return n;
    }

    @Test
    void aWorkerFailingHalfItsCallsIsEjectedFromPicksByGrpcsStatisticsAndComesBackAfterItsEjectionTime()
            throws Exception {
        Worker bad = worker(call -> call % 2 == 0);
        Worker[] all = fleet(bad, worker(call -> false), worker(call -> false), worker(call -> false),
                worker(call -> false));
        ManagedChannel channel = channel(resolver(eager(Map.of()), all));

        // Ejected: 100 calls in a row (20 each under round_robin) and none reaches it; the others answer them all.
        await().atMost(WAIT).untilAsserted(() -> {
            long[] reached = window(channel, 100, all);
            assertThat(reached[0]).as("calls that reached the half-failing worker").isZero();
            for (int i = 1; i < all.length; i++) {
                assertThat(reached[i]).as("calls that reached healthy worker %d", i).isPositive();
            }
        });
        long atEjection = bad.calls();

        // Back once its ejection time is over: calls reach it again.
        await().atMost(WAIT).untilAsserted(() -> {
            window(channel, 50, all);
            assertThat(bad.calls()).as("calls that reached it after its ejection").isGreaterThan(atEjection);
        });
    }

    @Test
    void withOutlierDetectionOffTheHalfFailingWorkerKeepsItsShareOfCalls() throws Exception {
        Worker bad = worker(call -> call % 2 == 0);
        Worker[] all = fleet(bad, worker(call -> false), worker(call -> false), worker(call -> false),
                worker(call -> false));
        ManagedChannel channel = channel(resolver(eager(Map.of(OD + "enabled", "false")), all));

        // Ten intervals and more: every window of calls still reaches every worker, the failing one included.
        await().during(Duration.ofSeconds(3)).atMost(WAIT)
                .until(() -> workersReached(window(channel, 50, all)) == all.length);
    }

    @Test
    void aHealthyFleetIsNeverEjectedEvenUnderTheMostEagerSettings() throws Exception {
        Worker[] all = fleet(worker(call -> false), worker(call -> false), worker(call -> false),
                worker(call -> false), worker(call -> false));
        // Any failure at all is an outlier, any success rate below the mean is, and all may be ejected.
        ManagedChannel channel = channel(resolver(eager(Map.of(
                OD + "failure-percentage.threshold", "0",
                OD + "success-rate.stdev-factor", "0",
                OD + "max-ejection-percent", "100")), all));

        await().during(Duration.ofSeconds(3)).atMost(WAIT)
                .until(() -> workersReached(window(channel, 50, all)) == all.length);
    }

    @Test
    void aFleetWhoseWorkersFailEveryCallInFlapsOfAMillisecondNeverLosesMoreThanMaxEjectionPercent()
            throws Exception {
        // Each worker fails every call in odd milliseconds and answers in even ones: each looks an
        // outlier to failure percentage (about half its calls fail, threshold 40), each interval anew.
        LongPredicate flapping = call -> (System.nanoTime() / 1_000_000) % 2 == 1;
        Worker[] all = fleet(worker(flapping), worker(flapping), worker(flapping), worker(flapping),
                worker(flapping));
        // 40 %: ejects while fewer than 40 % are ejected, so two of five at most; three always take calls.
        ManagedChannel channel = channel(resolver(eager(Map.of(OD + "max-ejection-percent", "40",
                OD + "base-ejection-time", "1s")), all));

        await().atMost(WAIT).until(() -> workersReached(window(channel, 60, all)) < all.length);
        await().during(Duration.ofSeconds(3)).atMost(WAIT)
                .until(() -> workersReached(window(channel, 60, all)) >= 3);
    }

    @Test
    void underKeyAffinityAHalfFailingOwnerKeepsItsKeysCallsForOnlySnapshotsMoveKeys() throws Exception {
        Worker bad = worker(call -> call % 2 == 0);
        Worker[] all = fleet(bad, worker(call -> false), worker(call -> false), worker(call -> false),
                worker(call -> false));
        WorkerResolver r = resolver(eager(Map.of()), all);
        ManagedChannel channel = ManagedChannelBuilder.forTarget(r.grpcTarget() + "?lb="
                + KeyAffinityLoadBalancerProvider.POLICY).usePlaintext().build();
        open.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        String key = ownedBy(bad, all);
        HealthGrpc.HealthBlockingStub keyed = HealthGrpc.newBlockingStub(channel)
                .withOption(KeyAffinityLoadBalancerProvider.KEY, key);

        // Unkeyed calls give every worker the statistics that would eject the half-failing one; its keys stay.
        await().during(Duration.ofSeconds(3)).atMost(WAIT).until(() -> {
            window(channel, 50, all);
            long before = bad.calls();
            for (int i = 0; i < 10; i++) {
                try {
                    keyed.withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
                } catch (StatusRuntimeException failed) {
                    // its made-up failure, or (were it ejected) the owner unreachable
                }
            }
            return bad.calls() - before == 10;
        });
    }

    /** A key whose rendezvous owner among {@code all} is {@code owner}. */
    private static String ownedBy(Worker owner, Worker... all) {
        for (int k = 0; ; k++) {
            String key = "key-" + k;
            Worker best = all[0];
            for (Worker w : all) {
                if (Long.compareUnsigned(KeyRouting.weight(key, w.endpoint().url()),
                        KeyRouting.weight(key, best.endpoint().url())) > 0) {
                    best = w;
                }
            }
            if (best == owner) {
                return key;
            }
        }
    }

    @Test
    void aBadOutlierDetectionValueFailsTheChannelsBuildNamingTheKeyAndTheValue() throws Exception {
        Worker w = worker(call -> false);
        WorkerResolver r = resolver(Map.of(OD + "max-ejection-percent", "150"), w);

        assertThatThrownBy(() -> ManagedChannelBuilder.forTarget(r.grpcTarget()).usePlaintext().build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(CallKeys.MAX_EJECTION_PERCENT.name())
                .hasMessageContaining("150")
                .hasMessageContaining("from 0 to 100");
    }

    @Test
    void aMistypedOutlierDetectionKeyFailsTheResolversBuildNamingIt() {
        assertThatThrownBy(() -> WorkerResolver.builder().config(RollcallConfig.of(Map.of(OD + "intervall", "1s")))
                .discovery(discovery).policy(w -> Verdict.accept()).build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(OD + "intervall");
    }
}
