package dev.rollcall.core.protocols;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.SnapshotListener;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.protocol.datafusion.GetWorkerInfoRequest;
import dev.rollcall.protocol.datafusion.GetWorkerInfoResponse;
import dev.rollcall.protocol.datafusion.WorkerServiceGrpc;
import io.grpc.Attributes;
import io.grpc.ServerTransportFilter;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The protocols that talk to servers Rollcall does not own must not break them. A plain grpc-java
 * server (every default, keepalive enforcement included: pings permitted every 5 minutes, a
 * {@code too_many_pings} GOAWAY at the third that comes sooner) keeps the one connection a resolver
 * with default settings opened to it, and its worker never leaves the snapshots. HTTP/2 pings every
 * 10 s had the server close the connection after about 30 s (and again, later and later): a reconnect
 * and a worker out of use in between.
 */
class PlainServersKeepTheirConnectionTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** The third ping strike came at ~30 s (pings every 10 s); past it, with a margin. */
    private static final long SCENARIO_SECONDS = 40;

    /** Counts a server's connections, and says so to {@code trouble} from the second one on. */
    private static ServerTransportFilter counting(AtomicInteger transports, CountDownLatch trouble) {
        return new ServerTransportFilter() {
            @Override
            public Attributes transportReady(Attributes attributes) {
                if (transports.incrementAndGet() > 1) {
                    trouble.countDown();
                }
                return attributes;
            }
        };
    }

    /** Records {@code worker}'s state in every snapshot; {@code trouble} hears of it leaving after it was in. */
    private static SnapshotListener recording(WorkerEndpoint worker, List<State> states, CountDownLatch trouble) {
        return s -> {
            State state = s.status(worker.url()).map(WorkerStatus::state).orElse(null);
            if (states.isEmpty() || states.get(states.size() - 1) != state) {
                states.add(state);
            }
            if (states.contains(State.COMPATIBLE) && s.workers().stream().noneMatch(w -> w.endpoint().equals(worker))) {
                trouble.countDown();
            }
        };
    }

    private static WorkerServiceGrpc.WorkerServiceImplBase datafusionWorker(String version) {
        return new WorkerServiceGrpc.WorkerServiceImplBase() {
            @Override
            public void getWorkerInfo(GetWorkerInfoRequest request, StreamObserver<GetWorkerInfoResponse> answer) {
                answer.onNext(GetWorkerInfoResponse.newBuilder().setVersion(version).build());
                answer.onCompleted();
            }
        };
    }

    private static boolean compatible(FleetSnapshot s, WorkerEndpoint e) {
        return s.status(e.url()).map(st -> st.state() == State.COMPATIBLE).orElse(false);
    }

    @Test
    void aPlainGrpcJavaServerKeepsTheOneConnectionAndItsWorkerNeverLeaves() throws Exception {
        // Both protocols at once: the scenario is the wait, and the suite pays for it once.
        CountDownLatch trouble = new CountDownLatch(1);
        AtomicInteger healthTransports = new AtomicInteger();
        AtomicInteger datafusionTransports = new AtomicInteger();
        List<State> healthStates = new CopyOnWriteArrayList<>();
        List<State> datafusionStates = new CopyOnWriteArrayList<>();
        HealthStatusManager health = new HealthStatusManager();
        HandedDiscovery healthDiscovery = new HandedDiscovery();
        HandedDiscovery datafusionDiscovery = new HandedDiscovery();
        try (HealthServer healthServer = HealthServer.start(0, counting(healthTransports, trouble),
                     health.getHealthService());
             HealthServer datafusionServer = HealthServer.start(0, counting(datafusionTransports, trouble),
                     datafusionWorker("0.9.0"));
             WorkerResolver healthResolver = WorkerResolver.builder().name("plain-health").discovery(healthDiscovery)
                     .policy(w -> Verdict.accept()).probeProtocol("grpc-health").build();
             WorkerResolver datafusionResolver = WorkerResolver.builder().name("plain-datafusion")
                     .discovery(datafusionDiscovery).policy(w -> Verdict.accept())
                     .probeProtocol("datafusion-distributed").build()) {
            WorkerEndpoint healthWorker = WorkerEndpoint.of("127.0.0.1", healthServer.port())
                    .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "3.1.0"));
            WorkerEndpoint datafusionWorker = WorkerEndpoint.of("127.0.0.1", datafusionServer.port());
            healthResolver.addListener(recording(healthWorker, healthStates, trouble));
            datafusionResolver.addListener(recording(datafusionWorker, datafusionStates, trouble));
            healthDiscovery.offer(healthWorker);
            datafusionDiscovery.offer(datafusionWorker);
            healthResolver.await(s -> compatible(s, healthWorker), WAIT);
            datafusionResolver.await(s -> compatible(s, datafusionWorker), WAIT);

            boolean troubled = trouble.await(SCENARIO_SECONDS, TimeUnit.SECONDS);

            assertThat(healthTransports.get()).as("grpc-health: connections to the server").isEqualTo(1);
            assertThat(datafusionTransports.get()).as("datafusion-distributed: connections to the server").isEqualTo(1);
            assertThat(healthStates.subList(healthStates.indexOf(State.COMPATIBLE), healthStates.size()))
                    .as("grpc-health: the worker's states from its first COMPATIBLE on, all " + healthStates)
                    .containsOnly(State.COMPATIBLE);
            assertThat(datafusionStates.subList(datafusionStates.indexOf(State.COMPATIBLE), datafusionStates.size()))
                    .as("datafusion-distributed: the worker's states from its first COMPATIBLE on, all " + datafusionStates)
                    .containsOnly(State.COMPATIBLE);
            assertThat(troubled).as("a reconnect, or the worker out of the snapshots").isFalse();
        }
    }
}
