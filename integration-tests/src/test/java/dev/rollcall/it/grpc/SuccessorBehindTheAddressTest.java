package dev.rollcall.it.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.faults.FaultProxy;
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
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A successor behind the same address: the resolver's kept connection still reaches the old
 * process while every new connection to the address reaches another one (an {@code SO_REUSEPORT}
 * hot restart, a layer-4 balancer, a NAT), made with the fault proxy's
 * {@code redirectNewConnections}. The {@code rollcall:} channel's gate verifies each connection
 * over itself, so what the resolver's own connection says vouches for no other connection. The
 * user's call is gRPC health's {@code Check}, counted on each worker's side.
 */
class SuccessorBehindTheAddressTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
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
    }

    private Worker worker(String version) throws Exception {
        Counted counted = new Counted();
        return new Worker(closing(RollcallWorker.builder().version(version).intercept(counted)
                .service(new HealthStatusManager().getHealthService()).start()), counted);
    }

    private WorkerResolver resolver(boolean keepChannels) {
        return closing(WorkerResolver.builder().discovery(discovery)
                .policy(w -> w.version().startsWith("1.") ? Verdict.accept() : Verdict.reject("not 1.x"))
                .keepProbeChannels(keepChannels).refreshInterval(Duration.ofHours(1)).fetchSchemas(false).build());
    }

    private ManagedChannel channel(String target) {
        ManagedChannel c = ManagedChannelBuilder.forTarget(target).usePlaintext().build();
        open.add(() -> c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return c;
    }

    private static void call(ManagedChannel channel) {
        HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.getDefaultInstance());
    }

    @ParameterizedTest(name = "behind {0}")
    @ValueSource(strings = {"round_robin", "pick_first", "rollcall_key_affinity"})
    void aRejectedSuccessorReachedByNewConnectionsGetsNoCallWhileTheResolversConnectionStillReachesTheOldProcess(
            String lb) throws Exception {
        Worker old = worker("1.0.0");
        Worker successor = worker("2.0.0");
        FaultProxy address = closing(FaultProxy.to(old.worker().endpoint()));
        WorkerResolver r = resolver(true);
        discovery.push(List.of(address.endpoint()));
        r.await(s -> s.counts().compatible() == 1, WAIT);
        ManagedChannel before = channel(r.grpcTarget() + "?lb=" + lb);
        call(before);
        assertThat(old.counted().calls.get()).as("a connection made before the successor came").isEqualTo(1);

        address.redirectNewConnections(successor.worker().endpoint());
        ManagedChannel fresh = channel(r.grpcTarget() + "?lb=" + lb);
        for (int i = 0; i < 20; i++) {
            assertThatThrownBy(() -> call(fresh)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(e.getStatus().getDescription())
                        .contains("reached instance '" + successor.worker().instanceId() + "' (version '2.0.0')")
                        .contains("not instance '" + old.worker().instanceId() + "'");
            });
        }
        assertThat(successor.counted().calls.get()).as("calls that reached the rejected successor").isZero();
        assertThat(r.pin().status(address.endpoint().url()).orElseThrow().info().orElseThrow().instanceId())
                .as("the resolver, over its own connection, still sees the old process")
                .isEqualTo(old.worker().instanceId());

        call(before);
        assertThat(old.counted().calls.get()).as("the verified connection made before keeps its calls").isEqualTo(2);
        assertThat(successor.counted().calls.get()).isZero();
    }

    /**
     * Without kept connections the resolver knows nothing of the successor until it probes again:
     * the gate's refusal asks it to, and the snapshot that then lists the successor verifies the
     * connection already open (no new one), while the connection to the old process is refused from
     * then on.
     */
    @Test
    void aSnapshotThatAcceptsTheSuccessorVerifiesTheOpenConnectionToItAndRefusesTheOneToTheOldProcess()
            throws Exception {
        Worker old = worker("1.0.0");
        Worker successor = worker("1.1.0");
        FaultProxy address = closing(FaultProxy.to(old.worker().endpoint()));
        WorkerResolver r = resolver(false);
        discovery.push(List.of(address.endpoint()));
        r.await(s -> s.counts().compatible() == 1, WAIT);
        ManagedChannel before = channel(r.grpcTarget());
        call(before);
        assertThat(old.counted().calls.get()).isEqualTo(1);

        address.redirectNewConnections(successor.worker().endpoint());
        ManagedChannel fresh = channel(r.grpcTarget());
        HealthGrpc.newBlockingStub(fresh).withWaitForReady().withDeadlineAfter(20, TimeUnit.SECONDS)
                .check(HealthCheckRequest.getDefaultInstance());
        assertThat(successor.counted().calls.get()).as("served once the snapshot accepted it").isEqualTo(1);
        assertThat(r.pin().status(address.endpoint().url()).orElseThrow().info().orElseThrow().instanceId())
                .isEqualTo(successor.worker().instanceId());

        await().atMost(WAIT).untilAsserted(() -> assertThatThrownBy(() -> call(before))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(e.getStatus().getDescription())
                        .contains("reached instance '" + old.worker().instanceId() + "'")
                        .contains("not instance '" + successor.worker().instanceId() + "'")));
        long served = old.counted().calls.get();
        assertThatThrownBy(() -> call(before)).isInstanceOf(StatusRuntimeException.class);
        assertThat(old.counted().calls.get()).as("no call once the snapshot no longer accepts it").isEqualTo(served);
    }
}
