package dev.rollcall.core.protocols;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import io.grpc.protobuf.services.HealthStatusManager;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code grpc-health} and {@code none}, whose workers say nothing of themselves: capabilities are
 * discovery's claim, the {@code rollcall.capabilities} label, read as {@link Capabilities#parse}
 * reads it; a lease that requires one takes only the workers so labelled. A label that is not such
 * a list leaves that worker out, naming the label and its value escaped, and the others keep serving;
 * a relabelled worker's capabilities follow discovery.
 */
class ClaimedCapabilitiesTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static WorkerEndpoint labelled(HealthServer server, String capabilities) {
        return WorkerEndpoint.of("127.0.0.1", server.port()).withLabels(capabilities == null
                ? Map.of(WorkerEndpoint.VERSION_LABEL, "3.1.0")
                : Map.of(WorkerEndpoint.VERSION_LABEL, "3.1.0", WorkerEndpoint.CAPABILITIES_LABEL, capabilities));
    }

    private static State stateOf(FleetSnapshot s, WorkerEndpoint e) {
        return s.status(e.url()).map(WorkerStatus::state).orElse(null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"grpc-health", "none"})
    void capabilitiesComeFromTheDiscoveryLabelAndAMalformedOneLeavesOnlyThatWorkerOut(String protocol)
            throws Exception {
        HealthStatusManager health = new HealthStatusManager();
        HandedDiscovery discovery = new HandedDiscovery();
        String hostile = "udf:geo\n[main] INFO FORGED\u001b[31m\u202e";
        try (HealthServer upgraded = HealthServer.start(0, health.getHealthService());
             HealthServer old = HealthServer.start(0, health.getHealthService());
             HealthServer mislabelled = HealthServer.start(0, health.getHealthService());
             WorkerResolver resolver = WorkerResolver.builder().name("claimed-" + protocol).discovery(discovery)
                     .policy(w -> Verdict.accept()).probeProtocol(protocol).build()) {
            WorkerEndpoint withUdf = labelled(upgraded, "udf:geo_distance, plan-protocol=3");
            WorkerEndpoint without = labelled(old, null);
            WorkerEndpoint bad = labelled(mislabelled, "plan-protocol=3, " + hostile);
            discovery.offer(withUdf, without, bad);

            FleetSnapshot s = resolver.await(x -> x.counts().candidates() == 3 && x.counts().pending() == 0, WAIT);
            assertThat(s.compatibleEndpoints()).extracting(WorkerEndpoint::url)
                    .containsExactlyInAnyOrder(withUdf.url(), without.url());
            WorkerInfo info = s.status(withUdf.url()).orElseThrow().info().orElseThrow();
            assertThat(info.capabilities()).isEqualTo(Capabilities.of("udf:geo_distance", "plan-protocol=3"));
            assertThat(info.labels()).as("Rollcall's own labels are not the worker's").isEmpty();
            assertThat(s.status(without.url()).orElseThrow().info().orElseThrow().capabilities())
                    .isEqualTo(Capabilities.none());

            WorkerStatus left = s.status(bad.url()).orElseThrow();
            assertThat(left.state()).isEqualTo(State.UNREACHABLE);
            assertThat(left.reason()).startsWith("bad label rollcall.capabilities='plan-protocol=3, udf:geo\\n")
                    .contains("capability name 'udf:geo\\n").contains("is not letters, digits");
            assertThat(PeerText.isClean(left.reason())).as("reason %s", left.reason()).isTrue();

            try (SnapshotLease lease = resolver.lease(Requirements.of("udf:geo_distance", "plan-protocol>=3"))) {
                assertThat(lease.snapshot().workers()).extracting(w -> w.endpoint().url())
                        .containsExactly(withUdf.url());
                assertThat(lease.snapshot().status(without.url()).orElseThrow().reason())
                        .isEqualTo("lacks udf:geo_distance");
            }

            // Discovery's claim changes: the relabelled worker gains the UDF, the mislabelled one is fixed.
            discovery.offer(withUdf, labelled(old, "udf:geo_distance, plan-protocol=4"),
                    labelled(mislabelled, "plan-protocol=2"));
            FleetSnapshot relabelled = resolver.await(x -> x.workersWith("udf:geo_distance").size() == 2
                    && stateOf(x, bad) == State.COMPATIBLE, WAIT);
            assertThat(relabelled.workersWith("plan-protocol>=3")).extracting(w -> w.endpoint().url())
                    .containsExactlyInAnyOrder(withUdf.url(), without.url());
            assertThat(relabelled.status(bad.url()).orElseThrow().info().orElseThrow().capabilities())
                    .isEqualTo(Capabilities.of("plan-protocol=2"));
        }
    }
}
