package dev.rollcall.core.protocols;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code grpc-health} against plain grpc-java servers with grpc-services' health service: the state
 * by push, the version from discovery's label. The refresh interval is an hour: whatever changes
 * within the test was pushed.
 */
class GrpcHealthProtocolTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Duration NO_REFRESH = Duration.ofHours(1);

    private static WorkerResolver resolver(HandedDiscovery discovery, String name) {
        return WorkerResolver.builder().name(name).discovery(discovery)
                .policy(w -> w.version().equals("3.1.0") ? Verdict.accept() : Verdict.reject("not 3.1.0"))
                .probeProtocol("grpc-health").refreshInterval(NO_REFRESH).build();
    }

    private static boolean is(FleetSnapshot s, WorkerEndpoint e, State state) {
        return s.status(e.url()).map(st -> st.state() == state).orElse(false);
    }

    @Test
    void notServingTakesTheWorkerOutByPushAndServingBringsItBack() throws Exception {
        HealthStatusManager health = new HealthStatusManager();
        HandedDiscovery discovery = new HandedDiscovery();
        try (HealthServer server = HealthServer.start(0, health.getHealthService());
             WorkerResolver resolver = resolver(discovery, "health-push")) {
            WorkerEndpoint worker = WorkerEndpoint.of("127.0.0.1", server.port())
                    .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "3.1.0"));
            discovery.offer(worker);
            resolver.await(s -> is(s, worker, State.COMPATIBLE), WAIT);
            long probes = resolver.probesSent();

            health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.NOT_SERVING);
            FleetSnapshot out = resolver.await(s -> s.status(worker.url())
                    .map(st -> st.state() != State.COMPATIBLE).orElse(false), WAIT);
            assertThat(out.status(worker.url()).orElseThrow().state()).isEqualTo(State.NOT_SERVING);
            assertThat(out.workers()).isEmpty();

            health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.SERVING);
            FleetSnapshot back = resolver.await(s -> is(s, worker, State.COMPATIBLE), WAIT);
            assertThat(back.workers()).extracting(w -> w.version()).containsExactly("3.1.0");
            assertThat(resolver.probesSent()).as("pushed, not probed again").isEqualTo(probes);
        }
    }

    @Test
    void aServerWithoutWatchIsPolledWithCheck() throws Exception {
        AtomicInteger checks = new AtomicInteger();
        HealthGrpc.HealthImplBase checkOnly = new HealthGrpc.HealthImplBase() {
            @Override
            public void check(HealthCheckRequest request, StreamObserver<HealthCheckResponse> answer) {
                checks.incrementAndGet();
                answer.onNext(HealthCheckResponse.newBuilder().setStatus(ServingStatus.SERVING).build());
                answer.onCompleted();
            }
            // watch() left to the base class: UNIMPLEMENTED
        };
        HandedDiscovery discovery = new HandedDiscovery();
        try (HealthServer server = HealthServer.start(0, checkOnly);
             WorkerResolver resolver = resolver(discovery, "health-check")) {
            WorkerEndpoint worker = WorkerEndpoint.of("127.0.0.1", server.port())
                    .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "3.1.0"));
            discovery.offer(worker);
            FleetSnapshot s = resolver.await(x -> is(x, worker, State.COMPATIBLE), WAIT);
            assertThat(s.workers()).extracting(w -> w.version()).containsExactly("3.1.0");
            assertThat(checks.get()).isEqualTo(1);
        }
    }

    @Test
    void aCandidateWithoutAVersionLabelIsFailedNamingTheLabelAndTheKey() throws Exception {
        HealthStatusManager health = new HealthStatusManager();
        HandedDiscovery discovery = new HandedDiscovery();
        try (HealthServer server = HealthServer.start(0, health.getHealthService());
             WorkerResolver resolver = resolver(discovery, "health-unlabelled")) {
            WorkerEndpoint worker = WorkerEndpoint.of("127.0.0.1", server.port());
            discovery.offer(worker);
            FleetSnapshot s = resolver.await(x -> is(x, worker, State.UNREACHABLE), WAIT);
            assertThat(s.status(worker.url()).orElseThrow().reason())
                    .contains(WorkerEndpoint.VERSION_LABEL).contains("rollcall.probe.protocol").contains("grpc-health");
        }
    }

    @Test
    void anUnknownServiceKeepsTheWorkerOut() throws Exception {
        HealthStatusManager health = new HealthStatusManager();
        HandedDiscovery discovery = new HandedDiscovery();
        try (HealthServer server = HealthServer.start(0, health.getHealthService());
             WorkerResolver resolver = WorkerResolver.builder().name("health-unknown").discovery(discovery)
                     .policy(w -> Verdict.accept()).probeProtocol("grpc-health")
                     .config(dev.rollcall.api.RollcallConfig.of(Map.of("rollcall.probe.grpc-health.service",
                             "demo.v1.Missing")))
                     .refreshInterval(NO_REFRESH).build()) {
            WorkerEndpoint worker = WorkerEndpoint.of("127.0.0.1", server.port())
                    .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "3.1.0"));
            discovery.offer(worker);
            FleetSnapshot s = resolver.await(x -> is(x, worker, State.NOT_SERVING), WAIT);
            assertThat(s.workers()).isEmpty();

            health.setStatus("demo.v1.Missing", ServingStatus.SERVING); // the service appears: pushed
            resolver.await(x -> is(x, worker, State.COMPATIBLE), WAIT);
        }
    }

}
