package dev.rollcall.discovery.k8s;

import static dev.rollcall.discovery.k8s.Slices.conditions;
import static dev.rollcall.discovery.k8s.Slices.endpoint;
import static dev.rollcall.discovery.k8s.Slices.ipv4;
import static dev.rollcall.discovery.k8s.Slices.port;
import static dev.rollcall.discovery.k8s.Slices.ready;
import static dev.rollcall.discovery.k8s.Slices.slice;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The slice-to-candidates rules on their own: readiness, ports, address types, merging, bad items. */
class SliceCandidatesTest {

    private static final PortSelector ONLY = PortSelector.onlyPort("rollcall.discovery.k8s.port");

    @Test
    void aReadyEndpointIsOneCandidatePerPodWithItsZoneNodeAndPod() {
        // An endpoint's addresses are fungible: the pod is one worker, reached at its first address.
        Endpoint twoAddresses = new EndpointBuilder(ready("127.0.0.2", "w-1")).withAddresses("127.0.0.2", "127.0.0.3").build();

        SliceCandidates.Result result = SliceCandidates.of(List.of(ipv4("s", "compute", 7001, twoAddresses)), ONLY, false);

        assertThat(urls(result)).containsExactly("grpc://127.0.0.2:7001");
        assertThat(result.endpoints()).allSatisfy(e ->
                assertThat(e.labels()).isEqualTo(Map.of("zone", "zone-a", "node", "node-1", "pod", "w-1")));
    }

    @Test
    void everyAddressOfAnEndpointWithoutATargetRefIsACandidate() {
        Endpoint noPod = new EndpointBuilder().withAddresses("127.0.0.2", "127.0.0.3").build();

        assertThat(urls(SliceCandidates.of(List.of(ipv4("s", "compute", 7001, noPod)), ONLY, false)))
                .containsExactlyInAnyOrder("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001");
    }

    @Test
    void notReadyEndpointsAreNotCandidatesButUnknownReadinessIs() {
        EndpointSlice s = ipv4("s", "compute", 7001,
                endpoint("127.0.0.2", "not-ready", false, false),
                endpoint("127.0.0.4", "unknown", null, null),
                new EndpointBuilder().withAddresses("127.0.0.5").build());

        assertThat(urls(SliceCandidates.of(List.of(s), ONLY, false)))
                .containsExactlyInAnyOrder("grpc://127.0.0.4:7001", "grpc://127.0.0.5:7001");
    }

    @Test
    void servingDecidesAndReadyCountsOnlyWhenServingIsUnset() {
        // publishNotReadyAddresses: ready is always true, serving follows the pod's readiness.
        EndpointSlice s = ipv4("s", "compute", 7001,
                conditions("127.0.0.2", "ready-not-serving", true, false, false),
                conditions("127.0.0.3", "serving", true, true, false),
                conditions("127.0.0.4", "old-api-ready", true, null, null),
                conditions("127.0.0.5", "old-api-not-ready", false, null, null));

        assertThat(urls(SliceCandidates.of(List.of(s), ONLY, false)))
                .containsExactlyInAnyOrder("grpc://127.0.0.3:7001", "grpc://127.0.0.4:7001");
    }

    @Test
    void aTerminatingButServingEndpointIsADrainingCandidateAndANotServingOneIsGone() {
        EndpointSlice s = ipv4("s", "compute", 7001,
                conditions("127.0.0.2", "up", true, true, false),
                conditions("127.0.0.3", "draining", false, true, true),
                conditions("127.0.0.4", "stopping", false, false, true));

        Map<String, Map<String, String>> labels = labelsByUrl(SliceCandidates.of(List.of(s), ONLY, false));

        assertThat(labels).containsOnlyKeys("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001");
        assertThat(labels.get("grpc://127.0.0.2:7001")).doesNotContainKey("rollcall.state");
        assertThat(labels.get("grpc://127.0.0.3:7001")).containsEntry("rollcall.state", "draining")
                .containsEntry("rollcall.instance-id", "uid-draining");
    }

    @Test
    void whenEveryEndpointIsTerminatingTheServingOnesAreStillDeliveredAllDraining() {
        EndpointSlice s = ipv4("s", "compute", 7001,
                conditions("127.0.0.2", "w-1", false, true, true),
                conditions("127.0.0.3", "w-2", false, true, true));

        SliceCandidates.Result result = SliceCandidates.of(List.of(s), ONLY, false);

        assertThat(result.endpoints()).hasSize(2)
                .allSatisfy(e -> assertThat(e.labels()).containsEntry("rollcall.state", "draining"));
    }

    @Test
    void aDualStackPodIsOneCandidateOfTheChosenFamily() {
        EndpointSlice v4 = ipv4("compute-v4", "compute", 7001,
                ready("127.0.0.2", "w-1"), ready("127.0.0.3", "w-2"));
        EndpointSlice v6 = Slices.ipv6("compute-v6", "compute", 7001,
                ready("::ffff:127.0.0.2", "w-1"), ready("::ffff:127.0.0.3", "w-2"), ready("::ffff:127.0.0.4", "v6-only"));
        List<EndpointSlice> both = List.of(v6, v4);

        assertThat(urls(SliceCandidates.of(both, ONLY, false, IpFamily.PREFER_IPV4))).containsExactlyInAnyOrder(
                "grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001", "grpc://[::ffff:127.0.0.4]:7001");
        assertThat(urls(SliceCandidates.of(both, ONLY, false, IpFamily.PREFER_IPV6))).containsExactlyInAnyOrder(
                "grpc://[::ffff:127.0.0.2]:7001", "grpc://[::ffff:127.0.0.3]:7001", "grpc://[::ffff:127.0.0.4]:7001");
        assertThat(urls(SliceCandidates.of(both, ONLY, false, IpFamily.IPV4))).containsExactlyInAnyOrder(
                "grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001");
        assertThat(urls(SliceCandidates.of(both, ONLY, false, IpFamily.IPV6))).hasSize(3)
                .allSatisfy(u -> assertThat(u).contains("[::ffff:"));
    }

    @Test
    void aPodServingInOneFamilyAndNotTheOtherIsStillOneCandidate() {
        // The two slices are written separately: for a moment a pod can be ready in one and not the other.
        EndpointSlice v4 = ipv4("compute-v4", "compute", 7001, endpoint("127.0.0.2", "w-1", false, false));
        EndpointSlice v6 = Slices.ipv6("compute-v6", "compute", 7001, ready("::ffff:127.0.0.2", "w-1"));

        assertThat(urls(SliceCandidates.of(List.of(v4, v6), ONLY, false, IpFamily.PREFER_IPV4)))
                .containsExactly("grpc://[::ffff:127.0.0.2]:7001");
    }

    @Test
    void hostnameZoneHintsAndThePodUidBecomeLabels() {
        Endpoint e = new EndpointBuilder(conditions("127.0.0.2", "w-1", true, true, false))
                .withHostname("worker-0")
                .withNewHints().addNewForZone("zone-a").addNewForZone("zone-b").endHints()
                .build();

        WorkerEndpoint candidate = SliceCandidates.of(List.of(ipv4("s", "compute", 7001, e)), ONLY, false)
                .endpoints().iterator().next();

        assertThat(candidate.labels()).containsEntry("zone", "zone-a").containsEntry("zone-hints", "zone-a,zone-b")
                .containsEntry("hostname", "worker-0").containsEntry("node", "node-1").containsEntry("pod", "w-1")
                .containsEntry("rollcall.instance-id", "uid-w-1").doesNotContainKey("rollcall.state");
    }

    @Test
    void anAddressInTwoSlicesCountsOnceAndIsACandidateIfReadyInEither() {
        EndpointSlice old = ipv4("a", "compute", 7001, endpoint("127.0.0.2", "w-1", false, false));
        EndpointSlice moved = ipv4("b", "compute", 7001, ready("127.0.0.2", "w-1"), ready("127.0.0.3", "w-2"));

        SliceCandidates.Result result = SliceCandidates.of(List.of(old, moved), ONLY, false);

        assertThat(result.endpoints()).hasSize(2);
        assertThat(urls(result)).containsExactlyInAnyOrder("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001");
    }

    @Test
    void slicesMayMapTheNamedPortToDifferentNumbers() {
        // A service whose targetPort is a name, over pods that listen on different numbers.
        EndpointSlice a = ipv4("a", "compute", 7001, ready("127.0.0.2", "w-1"));
        EndpointSlice b = ipv4("b", "compute", 7002, ready("127.0.0.3", "w-2"));

        assertThat(urls(SliceCandidates.of(List.of(a, b), PortSelector.byName("grpc", "k"), false)))
                .containsExactlyInAnyOrder("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7002");
    }

    @Test
    void onlyTcpPortsCount() {
        EndpointSlice s = slice("s", "compute", "IPv4", List.of(
                new EndpointPortBuilder().withName("dns").withPort(53).withProtocol("UDP").build(),
                port("grpc", 7001)), ready("127.0.0.2", "w-1"));

        assertThat(urls(SliceCandidates.of(List.of(s), ONLY, false))).containsExactly("grpc://127.0.0.2:7001");
    }

    @Test
    void anFqdnSliceGivesHostNameCandidates() {
        EndpointSlice s = slice("s", "compute", "FQDN", List.of(port("grpc", 7001)), ready("localhost.", "w-1"));

        assertThat(urls(SliceCandidates.of(List.of(s), ONLY, true))).containsExactly("grpcs://localhost:7001");
    }

    @Test
    void skipsMalformedAddressesNamingTheSliceAndKeepsTheRest() {
        EndpointSlice s = ipv4("s", "compute", 7001, ready("127.0.0.2", "w-1"), ready("::1", "wrong-family"),
                ready("127.0.0.256", "out-of-range"));

        SliceCandidates.Result result = SliceCandidates.of(List.of(s), ONLY, false);

        assertThat(urls(result)).containsExactly("grpc://127.0.0.2:7001");
        assertThat(result.problems()).hasSize(2).allSatisfy(p -> assertThat(p).startsWith("EndpointSlice "))
                .anySatisfy(p -> assertThat(p).contains("'::1'").contains("not an IPv4 address"))
                .anySatisfy(p -> assertThat(p).contains("'127.0.0.256'"));
    }

    @Test
    void skipsASliceOfAnUnknownAddressTypeOrWithoutThePortAndKeepsTheOthers() {
        EndpointSlice weird = slice("weird", "compute", "UnixSocket", List.of(port("grpc", 7001)), ready("/tmp/s", "w"));
        EndpointSlice noGrpc = slice("metrics-only", "compute", "IPv4", List.of(port("metrics", 9090)), ready("127.0.0.3", "w"));
        EndpointSlice good = ipv4("good", "compute", 7001, ready("127.0.0.2", "w-1"));

        SliceCandidates.Result result = SliceCandidates.of(List.of(weird, noGrpc, good), PortSelector.byName("grpc", "k"), false);

        assertThat(urls(result)).containsExactly("grpc://127.0.0.2:7001");
        assertThat(result.problems())
                .anySatisfy(p -> assertThat(p).contains("/weird").contains("addressType 'UnixSocket'"))
                .anySatisfy(p -> assertThat(p).contains("/metrics-only").contains("no TCP port named 'grpc'")
                        .contains("metrics=9090"));
    }

    @Test
    void aSliceWithoutEndpointsIsNoProblem() {
        EndpointSlice empty = slice("empty", "compute", "IPv4", List.of());

        SliceCandidates.Result result = SliceCandidates.of(List.of(empty), ONLY, false);

        assertThat(result.endpoints()).isEmpty();
        assertThat(result.problems()).isEmpty();
    }

    private static Map<String, Map<String, String>> labelsByUrl(SliceCandidates.Result result) {
        return result.endpoints().stream().collect(Collectors.toMap(WorkerEndpoint::url, WorkerEndpoint::labels));
    }

    private static Set<String> urls(SliceCandidates.Result result) {
        return result.endpoints().stream().map(WorkerEndpoint::url).collect(Collectors.toSet());
    }
}
