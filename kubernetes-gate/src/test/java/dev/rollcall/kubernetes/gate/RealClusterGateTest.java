package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.File;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Opt-in: runs only when {@code KUBECONFIG} names a kubeconfig <i>and</i> {@code ROLLCALL_K8S_REAL=1}
 * (it writes to the cluster, unlike discovery-k8s's read-only {@code RealClusterTest}), against the
 * cluster of the kubeconfig's current context. It creates a namespace {@code rollcall-gate-test-*}, a pod
 * declaring the gate ({@code registry.k8s.io/pause}, which the cluster pulls and runs), and a
 * hand-written EndpointSlice (no Service, so no controller owns it) whose one FQDN endpoint,
 * {@code localhost}, names that pod as its {@code targetRef} and the port of a real worker on this
 * host's loopback: the resolver here probes that worker, never the pod, and the gate here writes the
 * verdict on the real pod. The namespace is deleted at the end. Needs, in that namespace, what
 * deploy/kubernetes/rollcall.yaml grants, and the rights to create and delete namespaces, pods and
 * EndpointSlices.
 */
class RealClusterGateTest {

    private static final Duration WITHIN = Duration.ofMinutes(3);

    @Test
    void theGateSetsItsConditionOnAGatedPodOfARealClusterAndTheKubeletMakesItReady() {
        String kubeconfig = System.getenv("KUBECONFIG");
        assumeTrue(kubeconfig != null && !kubeconfig.isBlank() && "1".equals(System.getenv("ROLLCALL_K8S_REAL")),
                "set KUBECONFIG and ROLLCALL_K8S_REAL=1 to run against a real cluster");
        String file = kubeconfig.split(File.pathSeparator)[0];
        String namespace = "rollcall-gate-test-" + UUID.randomUUID().toString().substring(0, 8);
        String service = "workers";
        try (KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(Config.fromKubeconfig(null, new File(file))).build();
             WorkerFleet fleet = WorkerFleet.start("1.4.0")) {
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata()
                    .build()).create();
            try {
                Pod pod = client.pods().inNamespace(namespace).resource(new PodBuilder()
                        .withNewMetadata().withName("w-1").addToLabels("app.kubernetes.io/version", "1.4.0").endMetadata()
                        .withNewSpec().addNewReadinessGate().withConditionType(MockCluster.GATE).endReadinessGate()
                            .addNewContainer().withName("pause").withImage("registry.k8s.io/pause:3.9").endContainer()
                        .endSpec().build()).create();
                client.discovery().v1().endpointSlices().inNamespace(namespace).resource(new EndpointSliceBuilder()
                        .withNewMetadata().withName(service + "-w-1")
                            .addToLabels("kubernetes.io/service-name", service).endMetadata()
                        .withAddressType("FQDN")
                        .addNewPort().withName("grpc").withPort(fleet.worker(0).endpoint().port()).withProtocol("TCP")
                        .endPort()
                        .withEndpoints(new EndpointBuilder().withAddresses("localhost")
                                .withNewConditions().withReady(true).withServing(true).withTerminating(false)
                                .endConditions()
                                .withNewTargetRef().withKind("Pod").withName("w-1").withNamespace(namespace)
                                .withUid(pod.getMetadata().getUid()).endTargetRef().build())
                        .build()).create();
                RollcallConfig config = RollcallConfig.of(Map.of(
                        "rollcall.discovery.type", "k8s",
                        "rollcall.discovery.k8s.kubeconfig", file,
                        "rollcall.discovery.k8s.namespace", namespace,
                        "rollcall.discovery.k8s.service", service,
                        "rollcall.policy.type", "semver",
                        "rollcall.policy.semver.range", "^1.0.0",
                        "rollcall.kubernetes.readiness-gate", MockCluster.GATE));
                try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
                     KubernetesGate gate = KubernetesGate.start(resolver, config).orElseThrow()) {
                    await().atMost(WITHIN).ignoreExceptions().untilAsserted(() -> {
                        Pod now = client.pods().inNamespace(namespace).withName("w-1").get();
                        PodCondition condition = now.getStatus().getConditions().stream()
                                .filter(c -> MockCluster.GATE.equals(c.getType())).findFirst().orElseThrow();
                        assertThat(condition.getStatus()).isEqualTo("True");
                        assertThat(condition.getReason()).isEqualTo("Compatible");
                        // The real kubelet: containers ready and every gate True, so Ready.
                        assertThat(MockCluster.conditionStatus(now, "Ready")).contains("True");
                    });
                }
            } finally {
                client.namespaces().withName(namespace).delete();
            }
        }
    }
}
