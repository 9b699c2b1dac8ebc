package dev.rollcall.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.protocol.datafusion.GetWorkerInfoRequest;
import dev.rollcall.protocol.datafusion.GetWorkerInfoResponse;
import dev.rollcall.protocol.datafusion.WorkerServiceGrpc;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.faults.FaultProxy;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A host cut off (the fault proxy's blackhole: no byte moves, sockets stay open, no FIN, no RST)
 * under the protocols that talk to servers Rollcall does not own, which get no HTTP/2 pings (a
 * plain server punishes them, PlainServersKeepTheirConnectionTest in core): the kept connection is
 * checked with the protocol's own call every keepalive-time, keepalive-timeout its deadline, and a
 * check that goes unanswered drops it. With defaults (5 s + 3 s) the worker is out of new snapshots
 * within 10 s, as with {@code rollcall} (HostCutOffTest), and back once the network heals.
 */
class ProtocolHostCutOffTest {

    private static final Logger log = LoggerFactory.getLogger(ProtocolHostCutOffTest.class);
    /** keepalive-time 5 s + keepalive-timeout 3 s, and a margin: the rollcall protocol's bound. */
    private static final Duration BOUND = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(40);

    @AutoClose
    private final Closer closer = new Closer();

    /** A plain grpc-java server on loopback, every default (keepalive enforcement included). */
    private Server plainServer(BindableService service) throws IOException {
        Server s = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(service).build().start();
        closer.add((AutoCloseable) s::shutdownNow);
        return s;
    }

    private static WorkerServiceGrpc.WorkerServiceImplBase datafusionWorker() {
        return new WorkerServiceGrpc.WorkerServiceImplBase() {
            @Override
            public void getWorkerInfo(GetWorkerInfoRequest request, StreamObserver<GetWorkerInfoResponse> answer) {
                answer.onNext(GetWorkerInfoResponse.newBuilder().setVersion("0.9.0").build());
                answer.onCompleted();
            }
        };
    }

    /** A resolver with every default but the backend, the policy and the protocol. */
    private WorkerResolver resolver(PushDiscovery discovery, String protocol) {
        return closer.add(WorkerResolver.builder().name("cut-" + protocol).discovery(discovery)
                .policy(w -> Verdict.accept()).probeProtocol(protocol).build());
    }

    private static WorkerStatus status(WorkerResolver r, WorkerEndpoint e) {
        return r.pin().status(e.url()).orElseThrow();
    }

    @Test
    void aGrpcHealthOrDatafusionWorkerWhoseHostIsCutOffIsOutWithinTenSecondsAndBackWhenItHeals() throws Exception {
        Server health = plainServer(new HealthStatusManager().getHealthService());
        Server datafusion = plainServer(datafusionWorker());
        FaultProxy toHealth = closer.add(FaultProxy.to(health.getPort()));
        FaultProxy toDatafusion = closer.add(FaultProxy.to(datafusion.getPort()));
        PushDiscovery healthDiscovery = new PushDiscovery();
        PushDiscovery datafusionDiscovery = new PushDiscovery();
        WorkerResolver byHealth = resolver(healthDiscovery, "grpc-health");
        WorkerResolver byDatafusion = resolver(datafusionDiscovery, "datafusion-distributed");
        WorkerEndpoint healthWorker = toHealth.endpoint().withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "3.1.0"));
        healthDiscovery.push(List.of(healthWorker));
        datafusionDiscovery.push(List.of(toDatafusion.endpoint()));
        byHealth.awaitWorkers(1, WAIT);
        byDatafusion.awaitWorkers(1, WAIT);

        toHealth.blackhole();
        toDatafusion.blackhole();
        long cut = System.nanoTime();
        for (WorkerResolver r : List.of(byHealth, byDatafusion)) {
            await().atMost(BOUND.minusNanos(System.nanoTime() - cut)).pollInterval(Duration.ofMillis(20))
                    .until(() -> r.workers().isEmpty());
            log.info("MEASURED host cut off -> out of workers() ({}): {} ms", r.name(),
                    Duration.ofNanos(System.nanoTime() - cut).toMillis());
        }
        for (var w : List.of(Map.entry(byHealth, healthWorker), Map.entry(byDatafusion, toDatafusion.endpoint()))) {
            await().atMost(WAIT).until(() -> status(w.getKey(), w.getValue()).state() == State.UNREACHABLE);
            assertThat(status(w.getKey(), w.getValue()).reason()).startsWith("DEADLINE_EXCEEDED");
        }

        toHealth.pass();
        toDatafusion.pass();
        await().atMost(WAIT).until(() -> byHealth.workers().size() == 1 && byDatafusion.workers().size() == 1);
        assertThat(status(byHealth, healthWorker).state()).isEqualTo(State.COMPATIBLE);
        assertThat(status(byDatafusion, toDatafusion.endpoint()).state()).isEqualTo(State.COMPATIBLE);
    }
}
