package dev.rollcall.discovery.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Timeout;

/**
 * EndpointSlices are written by the cluster for whoever runs pods in the namespace, and their
 * fields (addresses, names, zones, ports) reach labels, URLs and log lines: any field values give
 * endpoints whose URL reads back, on the port the selector chose, or a named, escaped and bounded
 * problem for what was skipped.
 *
 * <p>The input is text: a line {@code S|addressType|portName|port|protocol|name|namespace} starts a
 * slice, each other line is an endpoint
 * {@code addresses(,)|ready|serving|terminating|zone|node|hostname|pod|uid}, booleans {@code t}/{@code f}/empty.
 */
class SliceCandidatesFuzzTest {

    /** Each field is escaped to at most 256 characters, each at most 6 once escaped; a line names a few. */
    private static final int MAX_PROBLEM_CHARS = 16 * 1024;

    @FuzzTest
    @Timeout(30)
    void sliceFieldsBecomeEndpointsOrNamedProblems(byte[] input) {
        String text = new String(input, StandardCharsets.UTF_8);
        List<EndpointSlice> slices = slices(text);
        PortSelector selector = switch (text.length() % 3) {
            case 0 -> PortSelector.byName("grpc", "rollcall.discovery.k8s.port");
            case 1 -> PortSelector.byNumber(7001, "rollcall.discovery.k8s.port");
            default -> PortSelector.onlyPort("rollcall.discovery.k8s.port");
        };
        SliceCandidates.Result result = SliceCandidates.of(slices, selector, text.length() % 2 == 0,
                IpFamily.values()[text.length() % IpFamily.values().length]);
        for (String problem : result.problems()) {
            assertThat(PeerText.isClean(problem)).as("escaped: %s", PeerText.escape(problem)).isTrue();
            assertThat(problem.length()).as("bounded").isLessThanOrEqualTo(MAX_PROBLEM_CHARS);
        }
        for (WorkerEndpoint e : result.endpoints()) {
            assertThat(WorkerEndpoint.parse(e.url())).isEqualTo(e.withLabels(Map.of()));
            if (selector.number() != 0) {
                assertThat(e.port()).isEqualTo(selector.number());
            }
            for (Map.Entry<String, String> label : e.labels().entrySet()) {
                assertThat(label.getValue()).isNotBlank();
            }
        }
    }

    private static List<EndpointSlice> slices(String text) {
        List<EndpointSlice> slices = new ArrayList<>();
        String[] header = null;
        List<Endpoint> endpoints = new ArrayList<>();
        for (String line : text.split("\n", 256)) {
            if (line.startsWith("S|")) {
                if (header != null) {
                    slices.add(slice(header, endpoints));
                }
                header = fields(line.substring(2), 6);
                endpoints = new ArrayList<>();
            } else if (header != null) {
                endpoints.add(endpoint(fields(line, 9)));
            }
        }
        if (header != null) {
            slices.add(slice(header, endpoints));
        }
        return slices;
    }

    private static EndpointSlice slice(String[] f, List<Endpoint> endpoints) {
        Integer port = null;
        try {
            port = f[2] == null ? null : Integer.valueOf(f[2]);
        } catch (NumberFormatException e) {
            // no port: as a slice of a service without one
        }
        return new EndpointSliceBuilder()
                .withNewMetadata().withName(f[4]).withNamespace(f[5]).endMetadata()
                .withAddressType(f[0])
                .withPorts(new EndpointPortBuilder().withName(f[1]).withPort(port).withProtocol(f[3]).build())
                .withEndpoints(endpoints)
                .build();
    }

    private static Endpoint endpoint(String[] f) {
        ObjectReference ref = f[7] == null ? null
                : new ObjectReferenceBuilder().withKind("Pod").withName(f[7]).withNamespace("ns").withUid(f[8]).build();
        return new EndpointBuilder()
                .withAddresses(f[0] == null ? null : Arrays.asList(f[0].split(",", 8)))
                .withNewConditions().withReady(bool(f[1])).withServing(bool(f[2])).withTerminating(bool(f[3]))
                .endConditions()
                .withZone(f[4]).withNodeName(f[5]).withHostname(f[6])
                .withTargetRef(ref)
                .build();
    }

    /** {@code n} fields split on '|'; missing or empty ones are null, as an absent field is. */
    private static String[] fields(String line, int n) {
        String[] parts = line.split("\\|", n);
        String[] out = new String[n];
        for (int i = 0; i < n; i++) {
            out[i] = i < parts.length && !parts[i].isEmpty() ? parts[i] : null;
        }
        return out;
    }

    private static Boolean bool(String f) {
        return f == null ? null : f.equals("t") ? Boolean.TRUE : f.equals("f") ? Boolean.FALSE : null;
    }
}
