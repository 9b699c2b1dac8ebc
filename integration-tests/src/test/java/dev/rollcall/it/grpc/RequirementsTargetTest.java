package dev.rollcall.it.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.KeyRouting;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.grpc.KeyAffinityLoadBalancerProvider;
import dev.rollcall.grpc.RollcallCallOptions;
import dev.rollcall.grpc.RollcallNameResolverProvider;
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
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.protobuf.services.HealthStatusManager;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Requirements on a {@code rollcall:} channel against three real workers on loopback, two of which
 * have {@code udf:geo_distance}: per call ({@link RollcallCallOptions#REQUIREMENTS}) and per channel
 * ({@code ?require=}). The "user call" is gRPC health's {@code Check}, counted on each worker's side.
 */
class RequirementsTargetTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Requirements GEO = Requirements.of("udf:geo_distance");
    @AutoClose
    private final Closer open = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    private <T extends AutoCloseable> T closing(T c) {
        return open.add(c);
    }

    /** Counts the health checks it serves. */
    private static final class Counted implements ServerInterceptor {
        final AtomicLong calls = new AtomicLong();

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                          ServerCallHandler<Q, R> next) {
            if (call.getMethodDescriptor().getServiceName().equals("grpc.health.v1.Health")) {
                calls.incrementAndGet();
            }
            return next.startCall(call, headers);
        }
    }

    private record Worker(RollcallWorker worker, Counted counted) {
        WorkerEndpoint endpoint() {
            return worker.endpoint();
        }

        long calls() {
            return counted.calls.get();
        }
    }

    private Worker worker(String... capabilities) throws Exception {
        Counted counted = new Counted();
        RollcallWorker w = RollcallWorker.builder().version("1.0.0").intercept(counted)
                .service(new HealthStatusManager().getHealthService()).capabilities(capabilities).start();
        return new Worker(closing(w), counted);
    }

    private WorkerResolver resolver(Worker... workers) throws Exception {
        WorkerResolver r = closing(WorkerResolver.builder().discovery(discovery).policy(w -> Verdict.accept())
                .refreshInterval(Duration.ofHours(1)).fetchSchemas(false).build());
        discovery.push(List.of(workers).stream().map(Worker::endpoint).toList());
        r.awaitWorkers(workers.length, WAIT);
        return r;
    }

    private ManagedChannel channel(String target) {
        ManagedChannel c = ManagedChannelBuilder.forTarget(target).usePlaintext().build();
        open.add(() -> c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return c;
    }

    private static void calls(ManagedChannel channel, Requirements requirements, int n) {
        HealthGrpc.HealthBlockingStub stub = HealthGrpc.newBlockingStub(channel);
        if (requirements != null) {
            stub = stub.withOption(RollcallCallOptions.REQUIREMENTS, requirements);
        }
        for (int i = 0; i < n; i++) {
            stub.withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
        }
    }

    @Test
    void callsThatNeedACapabilityLandOnlyOnTheWorkersThatHaveItAndOtherCallsOnAll() throws Exception {
        Worker a = worker("udf:geo_distance");
        Worker b = worker("udf:geo_distance", "plan-protocol=3");
        Worker plain = worker();
        WorkerResolver r = resolver(a, b, plain);
        ManagedChannel channel = channel(r.grpcTarget());

        calls(channel, GEO, 200);
        assertThat(plain.calls()).as("the worker without udf:geo_distance").isZero();
        assertThat(a.calls() + b.calls()).isEqualTo(200);
        assertThat(a.calls()).as("spread over both that have it").isPositive();
        assertThat(b.calls()).isPositive();

        calls(channel, null, 60);
        assertThat(plain.calls()).as("calls without requirements use every compatible worker").isPositive();
        assertThat(a.calls() + b.calls() + plain.calls()).isEqualTo(260);
    }

    @Test
    void aWorkerThatDropsTheCapabilityGetsNoNewCallThatNeedsIt() throws Exception {
        Worker a = worker("udf:geo_distance");
        Worker b = worker("udf:geo_distance");
        Worker plain = worker();
        WorkerResolver r = resolver(a, b, plain);
        ManagedChannel channel = channel(r.grpcTarget());
        calls(channel, GEO, 20);
        assertThat(a.calls()).isPositive();

        a.worker().capabilities(Capabilities.none()); // pushed on its watch stream
        r.await(s -> s.workersWith(GEO).size() == 1, WAIT);
        long before = a.calls();
        calls(channel, GEO, 100);
        assertThat(a.calls()).as("the worker that dropped udf:geo_distance").isEqualTo(before);
        assertThat(plain.calls()).isZero();

        calls(channel, null, 30);
        assertThat(a.calls()).as("it still takes calls that need nothing").isGreaterThan(before);
    }

    @Test
    void aCallWhoseRequirementNoWorkerMeetsFailsUnavailableNamingItAndReachesNoWorker() throws Exception {
        Worker a = worker("udf:geo_distance", "plan-protocol=2");
        Worker b = worker("plan-protocol=2");
        Worker plain = worker("plan-protocol=1");
        WorkerResolver r = resolver(a, b, plain);
        ManagedChannel channel = channel(r.grpcTarget());
        calls(channel, null, 3); // every connection up and verified

        assertThatThrownBy(() -> calls(channel, Requirements.of("plan-protocol>=3"), 1))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription()).contains("no worker meets plan-protocol>=3")
                            .contains("3 compatible workers lack it")
                            .containsPattern("\\(grpc://127\\.0\\.0\\.1:\\d+: lacks plan-protocol>=3 \\(has plan-protocol=[12]\\)\\)");
                });
        assertThat(a.calls() + b.calls() + plain.calls()).isEqualTo(3);
    }

    @Test
    void aWaitForReadyCallWaitsForAWorkerThatGainsTheCapability() throws Exception {
        Worker a = worker();
        Worker b = worker();
        WorkerResolver r = resolver(a, b);
        ManagedChannel channel = channel(r.grpcTarget());
        calls(channel, null, 2);
        long before = b.calls();

        var pending = HealthGrpc.newFutureStub(channel).withWaitForReady()
                .withOption(RollcallCallOptions.REQUIREMENTS, Requirements.of("udf:late"))
                .withDeadlineAfter(20, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
        assertThat(pending.isDone()).isFalse();
        b.worker().capabilities(Capabilities.of("udf:late"));
        HealthCheckResponse answer = pending.get(20, TimeUnit.SECONDS);
        assertThat(answer).isNotNull();
        assertThat(b.calls()).as("the call ran on the worker that gained udf:late").isEqualTo(before + 1);
    }

    @Test
    void aChannelWithRequirementsInItsTargetUsesOnlyTheWorkersThatMeetThemAndCallsAddTheirOwn() throws Exception {
        Worker a = worker("udf:geo_distance", "plan-protocol=3");
        Worker b = worker("udf:geo_distance", "plan-protocol=2");
        Worker plain = worker("plan-protocol=3");
        WorkerResolver r = resolver(a, b, plain);
        String target = RollcallNameResolverProvider.requiring(r.grpcTarget(), Requirements.of("plan-protocol>=3"));
        assertThat(target).endsWith("?require=plan-protocol%3E%3D3");
        ManagedChannel channel = channel(target);

        calls(channel, null, 40);
        assertThat(b.calls()).as("plan-protocol=2 is not in the channel").isZero();
        assertThat(a.calls()).isPositive();
        assertThat(plain.calls()).isPositive();

        long plainBefore = plain.calls();
        calls(channel, GEO, 40);
        assertThat(plain.calls()).as("the call's requirement on top of the channel's").isEqualTo(plainBefore);
        assertThat(b.calls()).isZero();

        ManagedChannel none = channel(r.grpcTarget() + "?require=udf:geo_distance,plan-protocol%3E%3D4");
        assertThatThrownBy(() -> calls(none, null, 1))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription())
                            .contains("no compatible worker meets udf:geo_distance, plan-protocol>=4")
                            .contains("3 lack it");
                });
    }

    @Test
    void underKeyAffinityAKeyedCallThatNeedsACapabilityGoesToTheKeysOwnerAmongTheWorkersThatHaveIt() throws Exception {
        Worker a = worker("udf:geo_distance");
        Worker b = worker("udf:geo_distance");
        Worker plain = worker();
        WorkerResolver r = resolver(a, b, plain);
        ManagedChannel channel = channel(r.grpcTarget() + "?lb=" + KeyAffinityLoadBalancerProvider.POLICY);
        calls(channel, null, 3);
        // A key whose owner among all three lacks the UDF: the call goes to its owner among the two that have it.
        String key = null;
        for (int i = 0; key == null; i++) {
            String candidate = "customer-" + i;
            if (owner(candidate, a, b, plain) == plain) {
                key = candidate;
            }
        }
        Worker expected = owner(key, a, b);
        long before = expected.calls();
        HealthGrpc.HealthBlockingStub stub = HealthGrpc.newBlockingStub(channel)
                .withOption(KeyAffinityLoadBalancerProvider.KEY, key)
                .withOption(RollcallCallOptions.REQUIREMENTS, GEO);
        long plainBefore = plain.calls();
        for (int i = 0; i < 30; i++) {
            stub.withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
        }
        assertThat(expected.calls() - before).as("every keyed call on the key's owner among those with the UDF")
                .isEqualTo(30);
        assertThat(plain.calls()).isEqualTo(plainBefore);
    }

    @Test
    void underPickFirstACallThatNeedsWhatOnlyAnUnconnectedWorkerHasFailsAtOnceInsteadOfWaiting() throws Exception {
        List<Worker> fleet = List.of(worker(), worker(), worker());
        WorkerResolver r = resolver(fleet.toArray(Worker[]::new));
        ManagedChannel channel = channel(r.grpcTarget() + "?lb=pick_first");
        calls(channel, null, 5);
        Worker used = fleet.stream().filter(w -> w.calls() == 5).findFirst().orElseThrow();
        Worker other = fleet.stream().filter(w -> w != used).findFirst().orElseThrow();
        other.worker().capabilities(Capabilities.of("udf:geo_distance"));
        r.await(s -> s.workersWith(GEO).size() == 1, WAIT);

        assertThatThrownBy(() -> calls(channel, GEO, 1))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).as(e.getStatus().toString()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription()).contains("no worker of this channel meets udf:geo_distance")
                            .contains("have no connection on it");
                });
        assertThat(used.calls()).as("the connected worker lacks it").isEqualTo(5);
    }

    private static Worker owner(String key, Worker... among) {
        Worker best = null;
        long weight = 0;
        for (Worker w : among) {
            long mine = KeyRouting.weight(key, w.endpoint().url());
            if (best == null || Long.compareUnsigned(mine, weight) > 0) {
                best = w;
                weight = mine;
            }
        }
        return best;
    }

    @Test
    void aMalformedRequirementInTheTargetFailsTheChannelNamingItEscaped() throws Exception {
        Worker a = worker("udf:geo_distance");
        WorkerResolver r = resolver(a);
        assertThatThrownBy(() -> channel(r.grpcTarget() + "?require=plan-protocol%3E%3Dbanana"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("require='plan-protocol>=banana'")
                .hasMessageContaining("is not an npm range");
        assertThatThrownBy(() -> channel(r.grpcTarget() + "?require=udf%1B%5B2Jx"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("require='udf\\u001b[2Jx'")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\u001b"));
        assertThat(a.calls()).isZero();
    }
}
