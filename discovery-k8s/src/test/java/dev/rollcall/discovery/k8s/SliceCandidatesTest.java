package dev.rollcall.discovery.k8s;

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
    void everyAddressOfAReadyEndpointIsACandidateWithItsZoneNodeAndPod() {
        Endpoint twoAddresses = new EndpointBuilder(ready("127.0.0.2", "w-1")).withAddresses("127.0.0.2", "127.0.0.3").build();

        SliceCandidates.Result result = SliceCandidates.of(List.of(ipv4("s", "compute", 7001, twoAddresses)), ONLY, false);

        assertThat(urls(result)).containsExactlyInAnyOrder("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001");
        assertThat(result.endpoints()).allSatisfy(e ->
                assertThat(e.labels()).isEqualTo(Map.of("zone", "zone-a", "node", "node-1", "pod", "w-1")));
    }

    @Test
    void notReadyAndTerminatingEndpointsAreNotCandidatesButUnknownReadinessIs() {
        EndpointSlice s = ipv4("s", "compute", 7001,
                endpoint("127.0.0.2", "not-ready", false, false),
                endpoint("127.0.0.3", "terminating", true, true),
                endpoint("127.0.0.4", "unknown", null, null),
                new EndpointBuilder().withAddresses("127.0.0.5").build());

        assertThat(urls(SliceCandidates.of(List.of(s), ONLY, false)))
                .containsExactlyInAnyOrder("grpc://127.0.0.4:7001", "grpc://127.0.0.5:7001");
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

    private static Set<String> urls(SliceCandidates.Result result) {
        return result.endpoints().stream().map(WorkerEndpoint::url).collect(Collectors.toSet());
    }
}
