package dev.rollcall.discovery.k8s;

import static dev.rollcall.discovery.k8s.KubernetesWorkerDiscoveryTest.FAST;
import static dev.rollcall.discovery.k8s.KubernetesWorkerDiscoveryTest.NS;
import static dev.rollcall.discovery.k8s.KubernetesWorkerDiscoveryTest.PREFIX;
import static dev.rollcall.discovery.k8s.KubernetesWorkerDiscoveryTest.WITHIN;
import static dev.rollcall.discovery.k8s.KubernetesWorkerDiscoveryTest.prefixed;
import static dev.rollcall.discovery.k8s.Slices.ipv4;
import static dev.rollcall.discovery.k8s.Slices.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.testkit.ConsoleCapture;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The version a pod's label claims, through each endpoint's {@code targetRef}, against fabric8's mock
 * API server (real HTTP and WebSocket watches on pods and EndpointSlices).
 */
class PodVersionLabelTest {

    private static final String VERSION = WorkerEndpoint.VERSION_LABEL;

    private MockKubernetesApi api;
    private final List<KubernetesWorkerDiscovery> started = new ArrayList<>();

    @BeforeAll
    static void warmUp() {
        MockKubernetesApi.warmUp();
    }

    @BeforeEach
    void startApi() {
        api = MockKubernetesApi.start();
    }

    @AfterEach
    void stopAll() {
        api.close();
        started.forEach(KubernetesWorkerDiscovery::close);
    }

    @Test
    void eachCandidateCarriesItsPodsVersionLabelAsTheClaimedVersion() {
        createPod(pod("w-1", Map.of("app.kubernetes.io/version", "1.4.0")));
        createPod(pod("w-2", Map.of("app", "workers")));
        api.client().pods().inNamespace("elsewhere").resource(pod("w-2", Map.of("app.kubernetes.io/version", "9.9.9"))
                .edit().editMetadata().withNamespace("elsewhere").endMetadata().build()).create();
        createSlice(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1"), ready("127.0.0.3", "w-2")));
        CandidateRecorder listener = new CandidateRecorder();

        start(Map.of(), listener);

        await().atMost(WITHIN).until(() -> listener.latest() != null);
        assertThat(versions(listener.latest())).as("the first set already has them")
                .isEqualTo(Map.of("grpc://127.0.0.2:7001", "1.4.0", "grpc://127.0.0.3:7001", "-"));
        assertThat(listener.sets()).hasSize(1);
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void aPodWhoseLabelChangesUpdatesItsCandidate() {
        createPod(pod("w-1", Map.of("app.kubernetes.io/version", "1.4.0")));
        createSlice(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of(), listener);
        await().atMost(WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "1.4.0").equals(versions(listener.latest())));

        api.client().pods().inNamespace(NS).withName("w-1")
                .edit(p -> new PodBuilder(p).editMetadata().addToLabels("app.kubernetes.io/version", "1.5.0")
                        .endMetadata().build());

        await().atMost(WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "1.5.0").equals(versions(listener.latest())));

        api.client().pods().inNamespace(NS).withName("w-1")
                .edit(p -> new PodBuilder(p).editMetadata().removeFromLabels("app.kubernetes.io/version")
                        .endMetadata().build());
        await().atMost(WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "-").equals(versions(listener.latest())));
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void aPodOfTheSameNameWithAnotherUidLendsTheEndpointNoVersion() {
        Pod current = api.client().pods().inNamespace(NS).resource(pod("w-1", Map.of("app.kubernetes.io/version", "1.5.0")))
                .create();
        // The endpoint names the pod w-1 that was there before (its UID "uid-w-1"): today's w-1 is another pod.
        createSlice(ipv4("workers-a", "compute", 7001, Slices.conditions("127.0.0.2", "w-1", true, true, false)));
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of(), listener);
        await().atMost(WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "-").equals(versions(listener.latest())));

        api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(ipv4("workers-a", "compute", 7001,
                new EndpointBuilder(Slices.conditions("127.0.0.2", "w-1", true, true, false)).editTargetRef()
                        .withUid(current.getMetadata().getUid()).endTargetRef().build())).update();

        await().atMost(WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "1.5.0").equals(versions(listener.latest())));
    }

    @Test
    void readsTheConfiguredVersionLabel() {
        createPod(pod("w-1", Map.of("app.kubernetes.io/version", "1.4.0", "example.com/build", "b-77")));
        createSlice(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        CandidateRecorder listener = new CandidateRecorder();

        start(Map.of("version-label", "example.com/build"), listener);

        await().atMost(WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "b-77").equals(versions(listener.latest())));
    }

    @Test
    void versionLabelNoneWatchesNoPods() {
        createPod(pod("w-1", Map.of("app.kubernetes.io/version", "1.4.0")));
        createSlice(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        CandidateRecorder listener = new CandidateRecorder();

        start(Map.of("version-label", "none"), listener);

        await().atMost(WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "-").equals(versions(listener.latest())));
        assertThat(api.podRequests()).isEmpty();
    }

    @Test
    void thePodSelectorNarrowsWhatIsListedAndWatched() {
        createPod(pod("w-1", Map.of("app", "workers", "app.kubernetes.io/version", "1.4.0")));
        createPod(pod("w-2", Map.of("app", "other", "app.kubernetes.io/version", "2.0.0")));
        createSlice(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1"), ready("127.0.0.3", "w-2")));
        CandidateRecorder listener = new CandidateRecorder();

        start(Map.of("pod-selector", "app=workers"), listener);

        await().atMost(WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "1.4.0", "grpc://127.0.0.3:7001", "-")
                .equals(versions(listener.latest())));
        assertThat(api.podRequests()).isNotEmpty().allMatch(path -> path.contains("labelSelector=app%3Dworkers"));
    }

    @Test
    void aHostileVersionLeavesOutOnlyItsPodNamingItEscaped() {
        createPod(pod("w-1", Map.of("app.kubernetes.io/version", "1.4.0")));
        createPod(pod("w-2", Map.of("app.kubernetes.io/version", "1.4.0\n\u001b[2Jforged")));
        createSlice(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1"), ready("127.0.0.3", "w-2")));
        CandidateRecorder listener = new CandidateRecorder();

        KubernetesWorkerDiscovery discovery = start(Map.of(), listener);

        await().atMost(WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "1.4.0").equals(versions(listener.latest())));
        assertThat(discovery.problems()).singleElement().asString()
                .isEqualTo("EndpointSlice workers/workers-a: skipping pod 'workers/w-2': its label app.kubernetes.io/version:"
                        + " the version '1.4.0\\n\\u001b[2Jforged' holds white space or a control character");
    }

    @Test
    void withoutRightsOnPodsTheCandidatesGoOutWithoutAClaimedVersionUntilTheRightsCome() {
        createPod(pod("w-1", Map.of("app.kubernetes.io/version", "1.4.0")));
        createSlice(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        api.forbidPods(true);
        CandidateRecorder listener = new CandidateRecorder();
        try (ConsoleCapture console = new ConsoleCapture()) {
            start(Map.of(), listener);

            await().atMost(WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "-").equals(versions(listener.latest())));
            if (ConsoleCapture.seesLogs()) {
                assertThat(console.text()).contains("cannot list or watch the pods of namespace workers",
                        "HTTP 403", "version-label=none", "candidates carry no claimed version until it can");
            }
        }
        assertThat(listener.errors()).as("the endpoints themselves are fresh").isEmpty();

        api.forbidPods(false);

        await().atMost(WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "1.4.0").equals(versions(listener.latest())));
    }

    @Test
    void theStoreKeepsOfEachPodOnlyWhatTheClaimNeeds() throws Exception {
        createPod(pod("w-1", Map.of("app.kubernetes.io/version", "1.4.0", "app", "workers")));
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(new ConfigBuilder(Config.empty())
                .withMasterUrl(api.url()).build()).build()) {
            PodVersions versions = PodVersions.inform(client, NS, "app.kubernetes.io/version", Map.of(), 0, () -> { },
                    (started, t) -> true);
            versions.start().toCompletableFuture().get(20, TimeUnit.SECONDS);
            try {
                assertThat(versions.kept()).singleElement().satisfies(pod -> {
                    assertThat(pod.getSpec()).isNull();
                    assertThat(pod.getStatus()).isNull();
                    assertThat(pod.getMetadata().getLabels()).containsOnlyKeys("app.kubernetes.io/version");
                    assertThat(pod.getMetadata().getName()).isEqualTo("w-1");
                    assertThat(pod.getMetadata().getUid()).isNotBlank();
                });
            } finally {
                versions.stop();
            }
        }
    }

    // ---- helpers

    static Pod pod(String name, Map<String, String> labels) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).withUid("uid-" + name)
                .withLabels(labels).endMetadata()
                .withNewSpec().addNewContainer().withName("worker").withImage("worker:1").endContainer().endSpec()
                .build();
    }

    void createPod(Pod pod) {
        api.client().pods().inNamespace(NS).resource(pod).create();
    }

    void createSlice(EndpointSlice slice) {
        api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(slice).create();
    }

    KubernetesWorkerDiscovery start(Map<String, String> keys, CandidateRecorder listener) {
        Map<String, String> all = new HashMap<>(Map.of("service", "compute", "namespace", NS, "master", api.url()));
        all.putAll(keys);
        KubernetesSettings options = new KubernetesWorkerDiscoveryProvider()
                .options(Settings.of(prefixed(all)).scope(PREFIX)).withTimings(FAST);
        KubernetesWorkerDiscovery discovery = new KubernetesWorkerDiscovery(options);
        started.add(discovery);
        discovery.start(listener);
        return discovery;
    }

    /** URL to claimed version ("-" for none) of a published set; null before the first one. */
    static Map<String, String> versions(Set<WorkerEndpoint> set) {
        return set == null ? null : set.stream().collect(Collectors.toMap(WorkerEndpoint::url,
                e -> e.labels().getOrDefault(VERSION, "-")));
    }
}
