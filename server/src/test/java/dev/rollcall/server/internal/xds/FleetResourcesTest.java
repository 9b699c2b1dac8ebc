package dev.rollcall.server.internal.xds;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.testkit.ConsoleCapture;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.grpc.xds.GrpcJavaResourceValidation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A snapshot in xDS's terms: who is in the ClusterLoadAssignment and with what health, localities
 * and their weights, addresses as clients take them, and resources grpc-java's own checks accept.
 */
class FleetResourcesTest {

    private final FleetResources resources = new FleetResources("fleet", "instance-1");

    private static WorkerStatus status(String url, State state, String... labels) {
        WorkerEndpoint endpoint = WorkerEndpoint.parse(url);
        Map<String, String> l = new TreeMap<>();
        for (int i = 0; i + 1 < labels.length; i += 2) {
            l.put(labels[i], labels[i + 1]);
        }
        WorkerEndpoint labelled = endpoint.withLabels(l);
        return new WorkerStatus(labelled, state, "", Optional.of(WorkerInfo.of(labelled, "1.0.0")));
    }

    private static FleetSnapshot snapshot(long number, WorkerStatus... statuses) {
        return FleetSnapshot.builder(number).statuses(List.of(statuses)).build();
    }

    /** {@code zone -> [address:port health, ...]}, and the zone's weight under key {@code zone#weight}. */
    private static Map<String, Object> layout(ClusterLoadAssignment cla) {
        Map<String, Object> out = new TreeMap<>();
        for (LocalityLbEndpoints locality : cla.getEndpointsList()) {
            List<String> endpoints = new ArrayList<>();
            for (LbEndpoint e : locality.getLbEndpointsList()) {
                var a = e.getEndpoint().getAddress().getSocketAddress();
                endpoints.add(a.getAddress() + ":" + a.getPortValue() + " " + e.getHealthStatus());
            }
            out.put(locality.getLocality().getZone(), endpoints);
            out.put(locality.getLocality().getZone() + "#weight", locality.getLoadBalancingWeight().getValue());
        }
        return out;
    }

    @Test
    void compatibleWorkersAreHealthyDrainingOnesDrainingAndEveryOtherCandidateAbsent() {
        ClusterLoadAssignment cla = resources.loadAssignment(snapshot(7,
                status("grpc://127.0.0.1:7001", State.COMPATIBLE),
                status("grpc://127.0.0.1:7002", State.DRAINING),
                status("grpc://127.0.0.1:7003", State.REJECTED),
                status("grpc://127.0.0.1:7004", State.PENDING),
                status("grpc://127.0.0.1:7005", State.UNREACHABLE),
                status("grpc://127.0.0.1:7006", State.NOT_SERVING),
                status("grpc://127.0.0.1:7007", State.OUTSIDE_SUBSET)));

        assertThat(cla.getClusterName()).isEqualTo("fleet");
        assertThat(layout(cla)).containsEntry("", List.of("127.0.0.1:7001 HEALTHY", "127.0.0.1:7002 DRAINING"));
    }

    @Test
    void zonesBecomeLocalitiesWeightedByTheirHealthyWorkersAndAtLeastOne() {
        ClusterLoadAssignment cla = resources.loadAssignment(snapshot(3,
                status("grpc://127.0.0.1:7001", State.COMPATIBLE, "topology.kubernetes.io/zone", "a", "zone", "z"),
                status("grpc://127.0.0.1:7002", State.COMPATIBLE, "zone", "a"),
                status("grpc://127.0.0.1:7003", State.DRAINING, "zone", "a"),
                status("grpc://127.0.0.1:7004", State.DRAINING, "zone", "b"),
                status("grpc://127.0.0.1:7005", State.COMPATIBLE)));

        assertThat(layout(cla)).isEqualTo(Map.of(
                "a", List.of("127.0.0.1:7001 HEALTHY", "127.0.0.1:7002 HEALTHY", "127.0.0.1:7003 DRAINING"),
                "a#weight", 2,
                "b", List.of("127.0.0.1:7004 DRAINING"),
                "b#weight", 1,
                "", List.of("127.0.0.1:7005 HEALTHY"),
                "#weight", 1));
    }

    @Test
    void anIpv6LiteralEndpointIsAnAddressClientsTake() throws Exception {
        ClusterLoadAssignment cla = resources.loadAssignment(snapshot(1,
                status("grpc://[::1]:7001", State.COMPATIBLE)));

        var address = cla.getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress();
        assertThat(java.net.InetAddress.getByName(address.getAddress()).isLoopbackAddress()).isTrue();
        assertThat(address.getAddress()).doesNotContain("[");
        assertThat(address.getPortValue()).isEqualTo(7001);
        assertThat(FleetResources.ipLiteral("[::1]")).isEqualTo(FleetResources.ipLiteral("::1"));
        GrpcJavaResourceValidation.endpoints(cla);
    }

    @Test
    void aWorkerKnownByNameIsLeftOutWithOneWarningAcrossPublishes() {
        try (ConsoleCapture console = new ConsoleCapture()) {
            for (long n = 1; n <= 3; n++) {
                ClusterLoadAssignment cla = resources.loadAssignment(snapshot(n,
                        status("grpc://worker-a.internal:7001", State.COMPATIBLE),
                        status("grpc://127.0.0.1:7002", State.COMPATIBLE)));
                assertThat(layout(cla)).containsEntry("", List.of("127.0.0.1:7002 HEALTHY"));
            }
            String log = console.text();
            assertThat(log.split("xDS leaves out", -1)).as(log).hasSize(2);
            assertThat(log).contains("xDS leaves out grpc://worker-a.internal:7001");
        }
    }

    @Test
    void theFleetsResourcesPassGrpcJavasOwnChecks() throws Exception {
        FleetSnapshot snapshot = snapshot(4,
                status("grpc://127.0.0.1:7001", State.COMPATIBLE, "zone", "a"),
                status("grpc://127.0.0.1:7002", State.DRAINING, "zone", "b"),
                status("grpc://[::1]:7003", State.COMPATIBLE));
        assertThat(GrpcJavaResourceValidation.listener(resources.listener()).toString()).contains("fleet");
        assertThat(GrpcJavaResourceValidation.route(resources.route()).toString()).contains("fleet");
        assertThat(GrpcJavaResourceValidation.cluster(resources.cluster()).toString()).contains("fleet");
        assertThat(GrpcJavaResourceValidation.endpoints(resources.loadAssignment(snapshot)).toString())
                .contains("7001").contains("7002").contains("7003");
        assertThat(GrpcJavaResourceValidation.endpoints(resources.loadAssignment(snapshot(5))).toString())
                .as("an empty fleet").isNotEmpty();
    }

    @Test
    void theEndpointsVersionIsTheSnapshotNumberAndTheInstanceAndNamesUnknownNamesApart() {
        assertThat(resources.endpointsVersion(12)).isEqualTo("12/instance-1");
        assertThat(FleetResources.versionFor("12/instance-1", "fleet", List.of("fleet"))).isEqualTo("12/instance-1");
        assertThat(FleetResources.versionFor("12/instance-1", "fleet", List.of("fleet", "nosuch")))
                .startsWith("12/instance-1+1.")
                .isEqualTo(FleetResources.versionFor("12/instance-1", "fleet", List.of("nosuch", "fleet")))
                .isNotEqualTo(FleetResources.versionFor("12/instance-1", "fleet", List.of("fleet", "other")));
    }
}
