package dev.rollcall.discovery.k8s;

import static dev.rollcall.testkit.HostileText.FORGED;
import static dev.rollcall.testkit.HostileText.forging;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.FinestLogCapture;
import dev.rollcall.testkit.HostileText;
import dev.rollcall.local.WorkerFleet;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes door of HostileTextNeverReachesLogsTest (integration-tests), here beside the mock
 * API server: EndpointSlice fields (addresses, hostname, node, zone, the target pod's name, port
 * names) and a pod's version label holding text made to fool a log. Every logger is captured at
 * its finest level; no line may hold a raw control character or start a forged line.
 */
class HostileSliceTextNeverReachesLogsTest {

    private static final String NS = KubernetesWorkerDiscoveryTest.NS;
    private static final Duration WITHIN = KubernetesWorkerDiscoveryTest.WITHIN;

    /**
     * Outside Rollcall, and not escaping what they print: fabric8's HTTP logger dumps every body at
     * TRACE (JSON leaves U+2028 and NEL as they are), and the mock API server is the test's.
     */
    private static final Set<String> WIRE_DUMPS = Set.of("io.fabric8.kubernetes.client.http.HttpLoggingInterceptor",
            "io.fabric8.kubernetes.client.server.mock.", "io.fabric8.mockwebserver.");

    @BeforeAll
    static void warmUp() {
        MockKubernetesApi.warmUp();
    }

    @Test
    void hostileEndpointSliceFieldsAndPodLabelsReachTheLogsEscaped() throws Exception {
        String log;
        try (MockKubernetesApi api = MockKubernetesApi.start();
             WorkerFleet fleet = WorkerFleet.start("1.0.0");
             FinestLogCapture capture = new FinestLogCapture()) {
            int port = fleet.worker(0).endpoint().port();
            api.client().pods().inNamespace(NS).resource(PodVersionLabelTest.pod("good",
                    Map.of("app.kubernetes.io/version", "1.0.0"))).create();
            api.client().pods().inNamespace(NS).resource(PodVersionLabelTest.pod("liar",
                    Map.of("app.kubernetes.io/version", forging("k8s-pod-version")))).create();
            EndpointSlice slice = Slices.ipv4("compute-a", "compute", port,
                    Slices.conditions("127.0.0.1", "good", true, true, false),
                    new EndpointBuilder(Slices.conditions("127.0.0.2", "liar", true, true, false))
                            .withHostname(forging("k8s-hostname")).withNodeName(forging("k8s-node"))
                            .withZone(forging("k8s-zone")).build(),
                    new EndpointBuilder(Slices.conditions(forging("k8s-address"), "liar", true, true, false)).build());
            EndpointSlice named = Slices.slice("compute-b", "compute", "IPv4",
                    List.of(Slices.port(forging("k8s-port-name"), 7001)),
                    Slices.conditions("127.0.0.3", forging("k8s-target-pod"), true, true, false));
            api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(slice).create();
            api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(named).create();

            try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                    "rollcall.discovery.type", "k8s",
                    "rollcall.discovery.k8s.service", "compute",
                    "rollcall.discovery.k8s.namespace", NS,
                    "rollcall.discovery.k8s.master", api.url(),
                    "rollcall.policy.type", "exact",
                    "rollcall.policy.exact.version", "1.0.0")))) {
                resolver.await(s -> s.compatibleEndpoints().stream()
                        .anyMatch(e -> e.url().equals(fleet.worker(0).endpoint().url())), WITHIN);
                await().atMost(WITHIN).until(() -> capture.text().contains(FORGED + "k8s-address"));
            }
            log = capture.text();
        }
        Path kept = Files.createDirectories(Path.of("target", "hostile-text"));
        Files.writeString(kept.resolve("kubernetes.log"), log);
        assertThat(HostileText.rawInLog(log, WIRE_DUMPS)).as("hostile text that reached a log line raw").isEmpty();
    }
}
