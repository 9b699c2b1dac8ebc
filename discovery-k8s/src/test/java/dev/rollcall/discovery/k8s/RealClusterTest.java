package dev.rollcall.discovery.k8s;

import dev.rollcall.testkit.CandidateRecorder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * Opt-in: runs only when {@code KUBECONFIG} names a kubeconfig, against the cluster of its current
 * context (or of {@code ROLLCALL_K8S_CONTEXT}). Read-only: it follows the {@code kubernetes}
 * service in {@code default}, which every cluster has (its endpoints are the API servers, on the
 * port named {@code https}), and checks the set against the slices read directly. Nothing is
 * created and no endpoint is contacted. Needs get, list and watch on EndpointSlices in
 * {@code default}.
 */
@EnabledIfEnvironmentVariable(named = "KUBECONFIG", matches = ".+")
class RealClusterTest {

    @Test
    void followsTheKubernetesServiceOfARealCluster() {
        Map<String, String> keys = new HashMap<>();
        keys.put("rollcall.discovery.k8s.service", "kubernetes");
        keys.put("rollcall.discovery.k8s.namespace", "default");
        keys.put("rollcall.discovery.k8s.port", "https");
        KubernetesSettings options = options(keys);
        CandidateRecorder listener = new CandidateRecorder();

        try (KubernetesWorkerDiscovery discovery = new KubernetesWorkerDiscovery(options)) {
            discovery.start(listener);
            await().atMost(Duration.ofSeconds(60)).until(() -> listener.latest() != null);

            Set<String> published = listener.latest().stream().map(WorkerEndpoint::url).collect(Collectors.toSet());
            assertThat(published).isNotEmpty().isEqualTo(readDirectly(options));
            assertThat(listener.errors()).isEmpty();
        }
    }

    /**
     * Opt-in on top: {@code ROLLCALL_K8S_DUAL_STACK_SERVICE=<namespace>/<service>} names a dual-stack
     * service (one IPv4 and one IPv6 slice over the same pods) whose slices list one TCP port (or
     * {@code ROLLCALL_K8S_DUAL_STACK_PORT} names it). Each serving pod must be one candidate, of
     * the family asked for.
     */
    @Test
    @EnabledIfEnvironmentVariable(named = "ROLLCALL_K8S_DUAL_STACK_SERVICE", matches = ".+/.+")
    void aRealDualStackServiceGivesOneCandidatePerPod() {
        String[] target = System.getenv("ROLLCALL_K8S_DUAL_STACK_SERVICE").split("/", 2);
        for (String family : new String[] {"PreferIPv4", "IPv6"}) {
            Map<String, String> keys = new HashMap<>();
            keys.put("rollcall.discovery.k8s.namespace", target[0]);
            keys.put("rollcall.discovery.k8s.service", target[1]);
            keys.put("rollcall.discovery.k8s.ip-family", family);
            String port = System.getenv("ROLLCALL_K8S_DUAL_STACK_PORT");
            if (port != null && !port.isBlank()) {
                keys.put("rollcall.discovery.k8s.port", port);
            }
            KubernetesSettings options = options(keys);
            CandidateRecorder listener = new CandidateRecorder();
            try (KubernetesWorkerDiscovery discovery = new KubernetesWorkerDiscovery(options)) {
                discovery.start(listener);
                await().atMost(Duration.ofSeconds(60)).until(() -> listener.latest() != null);

                Set<String> pods = listener.latest().stream().map(e -> e.labels().get("pod")).collect(Collectors.toSet());
                assertThat(pods).as(family + ": one candidate per pod").hasSize(listener.latest().size())
                        .doesNotContainNull();
                if (family.equals("IPv6")) {
                    assertThat(listener.latest()).allSatisfy(e -> assertThat(e.host()).contains(":"));
                }
                assertThat(listener.errors()).isEmpty();
            }
        }
    }

    /** The backend's settings from {@code keys}, in the context {@code ROLLCALL_K8S_CONTEXT} names, if any. */
    private static KubernetesSettings options(Map<String, String> keys) {
        Map<String, String> all = new HashMap<>(keys);
        String context = System.getenv("ROLLCALL_K8S_CONTEXT");
        if (context != null && !context.isBlank()) {
            all.put("rollcall.discovery.k8s.context", context);
        }
        return new KubernetesWorkerDiscoveryProvider().options(Settings.of(all).scope("rollcall.discovery.k8s."));
    }

    /** The ready addresses and https port of the slices, read with a plain client. */
    private static Set<String> readDirectly(KubernetesSettings options) {
        Set<String> urls = new HashSet<>();
        try (KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(options.access().toConfig("default", Duration.ofSeconds(10), Duration.ofSeconds(1))).build()) {
            for (EndpointSlice slice : client.discovery().v1().endpointSlices().inNamespace("default")
                    .withLabel(KubernetesWorkerDiscovery.SERVICE_NAME_LABEL, "kubernetes").list().getItems()) {
                int port = slice.getPorts().stream().filter(p -> "https".equals(p.getName()))
                        .map(EndpointPort::getPort).findFirst().orElseThrow();
                for (Endpoint e : slice.getEndpoints()) {
                    // serving, falling back to ready; terminating ones that serve are delivered (draining)
                    boolean ready = e.getConditions() == null || !Boolean.FALSE.equals(
                            e.getConditions().getServing() != null ? e.getConditions().getServing()
                                    : e.getConditions().getReady());
                    if (ready) {
                        for (String a : e.getAddresses()) {
                            urls.add("grpc://" + (a.contains(":") ? "[" + a + "]" : a) + ":" + port);
                        }
                    }
                }
            }
        }
        return urls;
    }
}
