package dev.rollcall.discovery.k8s;

import static dev.rollcall.discovery.k8s.KubernetesWorkerDiscoveryTest.FAST;
import static dev.rollcall.discovery.k8s.KubernetesWorkerDiscoveryTest.NS;
import static dev.rollcall.discovery.k8s.KubernetesWorkerDiscoveryTest.PREFIX;
import static dev.rollcall.discovery.k8s.KubernetesWorkerDiscoveryTest.prefixed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.CandidateRecorder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.management.ObjectName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What following the pods' version label costs, against fabric8's mock API server on loopback: N
 * pods as a Deployment's look (labels, owner reference, one container with env, resources and
 * probes, a status), N endpoints in slices of 100. It starts the backend with
 * {@code version-label=none} and with the default, waits for the set with every candidate's claimed
 * version, and reports the heap retained after full GCs, the API requests for pods, and the time to
 * the first complete set. It also holds the same pods as whole objects, for comparison with what the
 * stripped store keeps.
 *
 * <p>Not part of the default test run (tag {@code measurement}); the command is in the module's
 * README. Writes its figures to {@code target/pod-watch-cost.txt} and the test output.
 */
@Tag("measurement")
class PodWatchCostMeasurement {

    private static final int PODS = Integer.getInteger("rollcall.measure.pods", 5000);
    private static final Duration WAIT = Duration.ofMinutes(3);

    @Test
    void podWatchCost() throws Exception {
        try (MockKubernetesApi api = MockKubernetesApi.start()) {
            List<Endpoint> endpoints = new ArrayList<>();
            for (int i = 0; i < PODS; i++) {
                // The API server gives the pod its UID; the EndpointSlice controller copies it into targetRef.
                Pod created = api.client().pods().inNamespace(NS).resource(pod(i)).create();
                endpoints.add(new EndpointBuilder().withAddresses(address(i)).withNewConditions().withReady(true)
                        .endConditions().withNewTargetRef().withKind("Pod").withNamespace(NS).withName("w-" + i)
                        .withUid(created.getMetadata().getUid()).endTargetRef().build());
            }
            for (int s = 0; s * 100 < PODS; s++) {
                api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(Slices.ipv4("workers-" + s,
                        "compute", 7001, endpoints.subList(s * 100, Math.min(PODS, s * 100 + 100))
                                .toArray(Endpoint[]::new))).create();
            }
            int podJsonBytes = Serialization.asJson(pod(0)).length();

            long base = retainedHeap();
            Run off = run(api, Map.of("version-label", "none"));
            long heapOff = retainedHeap() - base;
            off.discovery.close();

            base = retainedHeap();
            int podRequestsBefore = api.podRequests().size();
            Run on = run(api, Map.of());
            long heapOn = retainedHeap() - base;
            String histogram = histogram();
            List<String> podRequests = api.podRequests().subList(podRequestsBefore, api.podRequests().size());
            assertThat(on.listener.latest()).allMatch(e -> e.labels().containsKey(WorkerEndpoint.VERSION_LABEL));
            on.discovery.close();

            base = retainedHeap();
            List<Pod> whole = api.client().pods().inNamespace(NS).list().getItems();
            long heapWhole = retainedHeap() - base;
            assertThat(whole).hasSize(PODS);
            // What the informer's store keeps, measured alone: the whole-heap figures above include the
            // in-process mock server's own buffers for the pod watch.
            BasicItemStore<Pod> store = PodVersions.store("app.kubernetes.io/version");
            base = retainedHeap();
            List<Pod> copies = api.client().pods().inNamespace(NS).list().getItems();
            copies.forEach(p -> store.put(Cache.metaNamespaceKeyFunc(p), p));
            copies = null;
            long heapStore = retainedHeap() - base;
            assertThat(store.size()).isEqualTo(PODS);

            long lists = podRequests.stream().filter(p -> !p.contains("watch=true")).count();
            long watches = podRequests.size() - lists;
            String report = String.format("""
                    pod watch cost, %d pods (%d bytes of JSON each), %d endpoints in %d slices, mock API server on loopback
                      version-label=none : first set in %5d ms, retained heap %7.1f KiB (%.0f B per pod)
                      version-label on   : first set in %5d ms, retained heap %7.1f KiB (%.0f B per pod)
                      -> the pod informer: +%.1f KiB (%.0f B per pod), %d list requests (pages of %d) + %d watch
                      the same pods held whole: %.1f KiB (%.0f B per pod)
                      the pod informer's store alone: %.1f KiB (%.0f B per pod)
                    """, PODS, podJsonBytes, PODS, (PODS + 99) / 100,
                    off.millis, heapOff / 1024.0, (double) heapOff / PODS,
                    on.millis, heapOn / 1024.0, (double) heapOn / PODS,
                    (heapOn - heapOff) / 1024.0, (double) (heapOn - heapOff) / PODS, lists, PodVersions.PAGE, watches,
                    heapWhole / 1024.0, (double) heapWhole / PODS, heapStore / 1024.0, (double) heapStore / PODS);
            report += "  while the pod informer ran, the largest classes on the heap (jcmd GC.class_histogram):\n" + histogram;
            System.out.print(report);
            Path out = Path.of("target", "pod-watch-cost.txt");
            Files.createDirectories(out.getParent());
            Files.writeString(out, report);
            whole.clear();
        }
    }

    private record Run(KubernetesWorkerDiscovery discovery, CandidateRecorder listener, long millis) {
    }

    private static Run run(MockKubernetesApi api, Map<String, String> keys) {
        Map<String, String> all = new HashMap<>(Map.of("service", "compute", "namespace", NS, "master", api.url(),
                "resync", "0s"));
        all.putAll(keys);
        KubernetesSettings options = new KubernetesWorkerDiscoveryProvider()
                .options(Settings.of(prefixed(all)).scope(PREFIX)).withTimings(FAST);
        KubernetesWorkerDiscovery discovery = new KubernetesWorkerDiscovery(options);
        CandidateRecorder listener = new CandidateRecorder();
        long start = System.nanoTime();
        discovery.start(listener);
        await().atMost(WAIT).pollInterval(Duration.ofMillis(5))
                .until(() -> listener.latest() != null && listener.latest().size() == PODS);
        return new Run(discovery, listener, (System.nanoTime() - start) / 1_000_000);
    }

    /** The least used heap over five full collections (System.gc() is a stop-the-world collection under G1). */
    private static long retainedHeap() {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    /** The heap's 12 largest classes and the fabric8 Pod model's counts: who holds what. */
    private static String histogram() throws Exception {
        Object text = ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
        List<String> lines = text.toString().lines().toList();
        StringBuilder out = new StringBuilder();
        lines.stream().skip(2).limit(12).forEach(l -> out.append("    ").append(l.strip()).append('\n'));
        lines.stream().filter(l -> l.endsWith("io.fabric8.kubernetes.api.model.Pod")
                        || l.endsWith("io.fabric8.kubernetes.api.model.PodSpec")
                        || l.endsWith("io.fabric8.kubernetes.api.model.ObjectMeta"))
                .forEach(l -> out.append("    ").append(l.strip()).append('\n'));
        return out.toString();
    }

    private static String address(int i) {
        return "10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255);
    }

    /** A pod as a Deployment's ReplicaSet writes it, give or take. */
    private static Pod pod(int i) {
        return new PodBuilder()
                .withNewMetadata().withName("w-" + i).withNamespace(NS).withUid("uid-" + i)
                    .addToLabels("app.kubernetes.io/name", "workers").addToLabels("app.kubernetes.io/version", "1.4." + i % 3)
                    .addToLabels("pod-template-hash", "7d9f8c6b5").addToLabels("app.kubernetes.io/part-of", "analytics")
                    .addToAnnotations("kubectl.kubernetes.io/restartedAt", "2026-12-01T10:00:00Z")
                    .addNewOwnerReference().withApiVersion("apps/v1").withKind("ReplicaSet").withName("workers-7d9f8c6b5")
                        .withUid("rs-uid").withController(true).endOwnerReference()
                .endMetadata()
                .withNewSpec().withNodeName("node-" + i % 50).withServiceAccountName("workers")
                    .addNewContainer().withName("worker").withImage("registry.example.com/analytics/worker:1.4.0")
                        .addNewPort().withName("grpc").withContainerPort(7001).endPort()
                        .addNewEnv().withName("ROLLCALL_WORKER_REGISTER").withValue("false").endEnv()
                        .addNewEnv().withName("JAVA_TOOL_OPTIONS").withValue("-XX:MaxRAMPercentage=75").endEnv()
                        .withNewResources().addToRequests("cpu", new Quantity("2")).addToRequests("memory", new Quantity("4Gi"))
                            .addToLimits("memory", new Quantity("4Gi")).endResources()
                        .withNewReadinessProbe().withNewGrpc().withPort(7001).endGrpc().withPeriodSeconds(5).endReadinessProbe()
                    .endContainer()
                .endSpec()
                .withNewStatus().withPhase("Running").withPodIP(address(i)).withHostIP("192.168.0." + i % 50)
                    .addNewCondition().withType("Ready").withStatus("True").endCondition()
                    .addNewContainerStatus().withName("worker").withReady(true).withRestartCount(0)
                        .withImage("registry.example.com/analytics/worker:1.4.0").endContainerStatus()
                .endStatus()
                .build();
    }
}
