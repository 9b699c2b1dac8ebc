package dev.rollcall.it.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.faults.FaultProxy;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.protobuf.services.HealthStatusManager;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Passive ejection of a silent worker: its host cut off with the sockets open (the fault proxy's
 * blackhole), a user's call through {@code callObserver()} ends {@code DEADLINE_EXCEEDED}. Without
 * kept connections and with an hourly refresh nothing else would tell the resolver, so what takes
 * the worker out here is that call alone.
 */
class CallTimeoutTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    @AutoClose
    private final Closer open = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    @Test
    void aCallThatTimesOutOnASilentWorkerTakesItOutOnceAProbeSentAtOnceTimesOutToo() throws Exception {
        RollcallWorker worker = open.add(RollcallWorker.builder().version("1.0.0")
                .service(new HealthStatusManager().getHealthService()).start());
        FaultProxy host = open.add(FaultProxy.to(worker.endpoint()));
        WorkerResolver r = open.add(WorkerResolver.builder().discovery(discovery).policy(w -> Verdict.accept())
                .keepProbeChannels(false).probeTimeout(Duration.ofMillis(500)).refreshInterval(Duration.ofHours(1))
                .fetchSchemas(false).build());
        discovery.push(List.of(host.endpoint()));
        r.awaitWorkers(1, WAIT);
        ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", host.port()).usePlaintext()
                .intercept(r.callObserver()).build();
        open.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        HealthGrpc.HealthBlockingStub stub = HealthGrpc.newBlockingStub(channel);
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());

        host.blackhole();
        assertThatThrownBy(() -> stub.withDeadlineAfter(300, TimeUnit.MILLISECONDS)
                .check(HealthCheckRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        FleetSnapshot out = r.await(s -> s.counts().compatible() == 0, WAIT);
        WorkerStatus status = out.status(host.endpoint().url()).orElseThrow();
        assertThat(status.state()).isEqualTo(WorkerStatus.State.UNREACHABLE);
        assertThat(status.reason()).isEqualTo("DEADLINE_EXCEEDED: no answer within 500 ms");

        host.pass();
        r.awaitWorkers(1, WAIT); // back when a retry answers
    }
}
