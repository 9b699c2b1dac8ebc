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
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
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
 * A pod whose readiness gate holds it back (containers ready, a gate's condition not {@code True})
 * has an endpoint that is neither ready nor serving, yet it must be a candidate: the readiness gate
 * Rollcall itself sets ({@code rollcall-kubernetes-gate}) needs the resolver's verdict on the pod
 * first, or no gated pod would ever become ready. Against fabric8's mock API server, as the kubelet
 * and the EndpointSlice controller write pods and slices.
 */
class GatedPodsTest {

    private static final String GATE = "rollcall.dev/compatible";
    private static final String URL = "grpc://127.0.0.2:7001";

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
    void aPodHeldOnlyByItsReadinessGateIsACandidateThoughItsEndpointDoesNotServe() {
        createPod(gated("w-1", "True", null));
        createSlice(notServing("w-1"));
        CandidateRecorder listener = start();

        await().atMost(WITHIN).until(() -> Set.of(URL).equals(urls(listener.latest())));

        // The gate turns True: the kubelet makes the pod Ready, the controller its endpoint serving.
        setConditions("w-1", "True", "True");
        updateSlice(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        await().atMost(WITHIN).until(() -> api.client().pods().inNamespace(NS).withName("w-1").get()
                .getStatus().getConditions().stream().anyMatch(c -> GATE.equals(c.getType())));
        assertThat(urls(listener.latest())).containsExactly(URL);
        assertThat(listener.errors()).isEmpty();
    }

    /**
     * The gate's own write turns the pod's gate True; the kubelet then writes Ready=True and only after
     * that does the EndpointSlice controller mark the endpoint serving. Meanwhile the pod must stay a
     * candidate, or the worker the gate has just let in leaves the fleet until both have caught up.
     */
    @Test
    void aGatedPodLetInStaysACandidateWhileItsEndpointHasNotCaughtUp() {
        createPod(gated("w-1", "True", null));
        createSlice(notServing("w-1"));
        CandidateRecorder listener = start();
        await().atMost(WITHIN).until(() -> Set.of(URL).equals(urls(listener.latest())));

        setConditions("w-1", "True", "True");     // gate True and Ready=True; the endpoint still not serving
        // A later pod of the same informer: once it is a candidate, w-1's update has been handled.
        createPod(gated("w-2", "True", null));
        updateSlice(ipv4("workers-a", "compute", 7001, notServingEndpoint("127.0.0.2", "w-1"),
                notServingEndpoint("127.0.0.3", "w-2")));
        await().atMost(WITHIN).until(() -> urls(listener.latest()).contains("grpc://127.0.0.3:7001"));

        List<Set<WorkerEndpoint>> sets = listener.sets();
        int first = 0;
        while (!urls(sets.get(first)).contains(URL)) {
            first++;
        }
        assertThat(sets.subList(first, sets.size())).as("every set published since w-1 was first a candidate")
                .allMatch(set -> urls(set).contains(URL));
        assertThat(urls(listener.latest())).contains(URL);
    }

    @Test
    void aGatedPodWhoseContainersAreNotReadyIsNoCandidateUntilTheyAre() {
        createPod(gated("w-1", "False", null));
        createPod(gated("w-2", "True", null));
        createSlice(ipv4("workers-a", "compute", 7001, notServingEndpoint("127.0.0.2", "w-1"),
                notServingEndpoint("127.0.0.3", "w-2")));
        CandidateRecorder listener = start();
        await().atMost(WITHIN).until(() -> Set.of("grpc://127.0.0.3:7001").equals(urls(listener.latest())));

        setConditions("w-1", "True", null);

        await().atMost(WITHIN).until(() -> Set.of(URL, "grpc://127.0.0.3:7001").equals(urls(listener.latest())));

        // Its gate set False by Rollcall (the policy rejected it) keeps it a candidate: the resolver
        // must keep probing it, or a fixed worker could never become ready again.
        setConditions("w-1", "True", "False");
        setConditions("w-2", "False", "False");
        await().atMost(WITHIN).until(() -> Set.of(URL).equals(urls(listener.latest())));
    }

    @Test
    void aTerminatingGatedPodIsNoCandidate() {
        createPod(gated("w-1", "True", null));
        createSlice(ipv4("workers-a", "compute", 7001, Slices.endpoint("127.0.0.2", "w-1", false, true)));
        createPod(gated("w-2", "True", null));
        createSlice(ipv4("workers-b", "compute", 7001, notServingEndpoint("127.0.0.3", "w-2")));
        CandidateRecorder listener = start();

        await().atMost(WITHIN).until(() -> Set.of("grpc://127.0.0.3:7001").equals(urls(listener.latest())));
    }

    @Test
    void aPodThatIsNotReadyWithoutReadinessGatesStaysOut() {
        createPod(new PodBuilder(gated("w-1", "False", null)).editSpec().withReadinessGates(List.of()).endSpec().build());
        createPod(gated("w-2", "True", null));
        createSlice(ipv4("workers-a", "compute", 7001, notServingEndpoint("127.0.0.2", "w-1"),
                notServingEndpoint("127.0.0.3", "w-2")));
        CandidateRecorder listener = start();

        await().atMost(WITHIN).until(() -> Set.of("grpc://127.0.0.3:7001").equals(urls(listener.latest())));
    }

    @Test
    void aStaleTargetRefNamingAReplacedPodLendsItNoGateHold() {
        Pod successor = createPod(gated("w-1", "True", null));
        // The endpoint names the w-1 that was there before (another UID): the gate hold is today's pod's.
        createSlice(ipv4("workers-a", "compute", 7001, new EndpointBuilder(notServingEndpoint("127.0.0.2", "w-1"))
                .editTargetRef().withUid("uid-of-an-earlier-w-1").endTargetRef().build()));
        createPod(gated("w-2", "True", null));
        createSlice(ipv4("workers-b", "compute", 7001, notServingEndpoint("127.0.0.3", "w-2")));
        CandidateRecorder listener = start();

        await().atMost(WITHIN).until(() -> Set.of("grpc://127.0.0.3:7001").equals(urls(listener.latest())));
        assertThat(successor.getMetadata().getUid()).isNotEqualTo("uid-of-an-earlier-w-1");
    }

    @Test
    void aPodThatForgesTheStoresMarkerIsNotHeldByGates() {
        // Someone annotates a not-ready pod without gates with the marker the store keeps: a pod from
        // the API server has a spec and a status, so only the store's own copy counts.
        createPod(new PodBuilder(gated("w-1", "False", null)).editMetadata()
                .addToAnnotations(PodVersions.HELD_BY_GATES, "true").endMetadata()
                .editSpec().withReadinessGates(List.of()).endSpec().build());
        createPod(gated("w-2", "True", null));
        createSlice(ipv4("workers-a", "compute", 7001, notServingEndpoint("127.0.0.2", "w-1"),
                notServingEndpoint("127.0.0.3", "w-2")));
        CandidateRecorder listener = start();

        await().atMost(WITHIN).until(() -> Set.of("grpc://127.0.0.3:7001").equals(urls(listener.latest())));
    }

    @Test
    void theStoreKeepsOfAGatedPodOnlyThatItIsHeld() throws Exception {
        createPod(gated("w-1", "True", null));
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(new ConfigBuilder(Config.empty())
                .withMasterUrl(api.url()).build()).build()) {
            PodVersions versions = PodVersions.inform(client, NS, "app.kubernetes.io/version", Map.of(), 0, () -> { },
                    (isStarted, t) -> true);
            versions.start().toCompletableFuture().get(20, TimeUnit.SECONDS);
            try {
                assertThat(versions.kept()).singleElement().satisfies(pod -> {
                    assertThat(pod.getSpec()).isNull();
                    assertThat(pod.getStatus()).isNull();
                    assertThat(pod.getMetadata().getAnnotations()).containsOnlyKeys(PodVersions.HELD_BY_GATES);
                });
            } finally {
                versions.stop();
            }
        }
    }

    // ---- helpers

    /** A pod declaring the gate, as the kubelet reports it: ContainersReady as given, the gate's condition as given (null: not set). */
    static Pod gated(String name, String containersReady, String gate) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).withUid("uid-" + name)
                .addToLabels("app.kubernetes.io/version", "1.4.0").endMetadata()
                .withNewSpec().addNewReadinessGate().withConditionType(GATE).endReadinessGate()
                .addNewContainer().withName("worker").withImage("worker:1").endContainer().endSpec();
        return withConditions(pod.build(), containersReady, gate);
    }

    private static Pod withConditions(Pod pod, String containersReady, String gate) {
        boolean ready = "True".equals(containersReady) && "True".equals(gate);
        List<io.fabric8.kubernetes.api.model.PodCondition> conditions = new ArrayList<>(List.of(
                new io.fabric8.kubernetes.api.model.PodConditionBuilder().withType("ContainersReady")
                        .withStatus(containersReady).build(),
                new io.fabric8.kubernetes.api.model.PodConditionBuilder().withType("Ready")
                        .withStatus(ready ? "True" : "False").withReason(ready ? null
                                : "True".equals(containersReady) ? "ReadinessGatesNotReady" : "ContainersNotReady")
                        .build()));
        if (gate != null) {
            conditions.add(new io.fabric8.kubernetes.api.model.PodConditionBuilder().withType(GATE).withStatus(gate)
                    .build());
        }
        PodBuilder b = new PodBuilder(pod).withNewStatus().withPhase("Running").withConditions(conditions).endStatus();
        return b.build();
    }

    private void setConditions(String name, String containersReady, String gate) {
        api.client().pods().inNamespace(NS).withName(name).editStatus(p -> withConditions(p, containersReady, gate));
    }

    /** Not ready, not serving, not terminating; its targetRef names the pod without a UID. */
    private static Endpoint notServingEndpoint(String address, String pod) {
        return Slices.endpoint(address, pod, false, false);
    }

    private static io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice notServing(String pod) {
        return ipv4("workers-a", "compute", 7001, notServingEndpoint("127.0.0.2", pod));
    }

    /** Creates the pod, then writes its status as the kubelet does (an API server ignores status on create). */
    private Pod createPod(Pod pod) {
        Pod created = api.client().pods().inNamespace(NS).resource(pod).create();
        return api.client().pods().inNamespace(NS).withName(pod.getMetadata().getName())
                .editStatus(p -> new PodBuilder(p).withStatus(pod.getStatus()).build());
    }

    private void createSlice(io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice slice) {
        api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(slice).create();
    }

    private void updateSlice(io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice slice) {
        api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(slice).update();
    }

    private CandidateRecorder start() {
        CandidateRecorder listener = new CandidateRecorder();
        Map<String, String> all = new HashMap<>(Map.of("service", "compute", "namespace", NS, "master", api.url()));
        KubernetesSettings options = new KubernetesWorkerDiscoveryProvider()
                .options(Settings.of(prefixed(all)).scope(PREFIX)).withTimings(FAST);
        KubernetesWorkerDiscovery discovery = new KubernetesWorkerDiscovery(options);
        started.add(discovery);
        discovery.start(listener);
        return listener;
    }

    private static Set<String> urls(Set<WorkerEndpoint> set) {
        return set == null ? null : set.stream().map(WorkerEndpoint::url).collect(Collectors.toSet());
    }
}
