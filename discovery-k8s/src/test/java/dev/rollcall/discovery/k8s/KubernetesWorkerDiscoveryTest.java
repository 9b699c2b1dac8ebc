package dev.rollcall.discovery.k8s;

import dev.rollcall.testkit.CandidateRecorder;
import static dev.rollcall.discovery.k8s.Slices.endpoint;
import static dev.rollcall.discovery.k8s.Slices.ipv4;
import static dev.rollcall.discovery.k8s.Slices.port;
import static dev.rollcall.discovery.k8s.Slices.ready;
import static dev.rollcall.discovery.k8s.Slices.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.local.UnresponsiveWorker;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend against fabric8's mock API server (real HTTP and WebSocket watches), observed through
 * a recording listener: what it publishes and when it reports errors. No worker is probed here.
 * What every backend promises is in {@link KubernetesWorkerDiscoveryContractTest}.
 */
class KubernetesWorkerDiscoveryTest {

    static final String NS = "workers";
    static final String PREFIX = "rollcall.discovery.k8s.";
    static final Duration WITHIN = Duration.ofSeconds(20);
    /** Short enough that outages are reported and recovered from within a test's patience. */
    static final KubernetesSettings.Timings FAST = new KubernetesSettings.Timings(
            Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ofMillis(100));

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
        // The API server first: when a client closes a watch, the mock can stall its event loop for
        // seconds (a close it queued waits for that loop), which would slow every test down.
        api.close();
        started.forEach(KubernetesWorkerDiscovery::close);
    }

    @Test
    void publishesReadyEndpointsOfTheServiceWithZoneNodeAndPodLabels() {
        create(ipv4("workers-abc", "compute", 7001, ready("127.0.0.2", "w-1"), ready("127.0.0.3", "w-2")));
        CandidateRecorder listener = new CandidateRecorder();

        start(Map.of(), listener);

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(listener.latest()))
                .containsExactlyInAnyOrder("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001"));
        assertThat(listener.latest()).extracting(WorkerEndpoint::labels)
                .contains(Map.of("zone", "zone-a", "node", "node-1", "pod", "w-1"));
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void followsOnlyTheSlicesOfItsServiceInItsNamespace() {
        create(ipv4("compute-1", "compute", 7001, ready("127.0.0.2", "w-1")));
        create(ipv4("storage-1", "storage", 7001, ready("127.0.0.3", "s-1")));
        api.client().discovery().v1().endpointSlices().inNamespace("elsewhere")
                .resource(ipv4("compute-2", "compute", 7001, ready("127.0.0.4", "x-1"))).create();
        CandidateRecorder listener = new CandidateRecorder();

        start(Map.of(), listener);

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(listener.latest()))
                .containsExactly("grpc://127.0.0.2:7001"));
    }

    @Test
    void followsEndpointsAddedToAnExistingSlice() {
        create(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of(), listener);
        await().atMost(WITHIN).until(() -> urls(listener.latest()).equals(Set.of("grpc://127.0.0.2:7001")));

        update(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1"), ready("127.0.0.3", "w-2")));

        await().atMost(WITHIN).until(() -> urls(listener.latest())
                .equals(Set.of("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001")));
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void connectsWithTheClusterAndCredentialsOfAKubeconfigContext(@TempDir Path dir) throws IOException {
        create(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters:
                - name: mock
                  cluster: {server: "%s"}
                users:
                - name: robot
                  user: {token: kubeconfig-token}
                contexts:
                - name: elsewhere
                  context: {cluster: mock, user: robot, namespace: elsewhere}
                - name: workers
                  context: {cluster: mock, user: robot, namespace: workers}
                current-context: elsewhere
                """.formatted(api.url()));
        CandidateRecorder listener = new CandidateRecorder();
        Map<String, String> keys = Map.of("service", "compute", "kubeconfig", kubeconfig.toString(), "context", "workers");
        KubernetesSettings options = new KubernetesWorkerDiscoveryProvider()
                .options(Settings.of(prefixed(keys)).scope(PREFIX)).withTimings(FAST);
        KubernetesWorkerDiscovery discovery = new KubernetesWorkerDiscovery(options);
        started.add(discovery);

        discovery.start(listener);

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(listener.latest()))
                .containsExactly("grpc://127.0.0.2:7001"));
        assertThat(api.sliceReadAuthorizations()).isNotEmpty().allMatch("Bearer kubeconfig-token"::equals);
    }

    @Test
    void picksThePortByName() {
        create(slice("workers-a", "compute", "IPv4", List.of(port("metrics", 9090), port("grpc", 7001)),
                ready("127.0.0.2", "w-1")));
        CandidateRecorder listener = new CandidateRecorder();

        start(Map.of("port", "grpc"), listener);

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(listener.latest()))
                .containsExactly("grpc://127.0.0.2:7001"));
    }

    @Test
    void picksThePortByNumber() {
        create(slice("workers-a", "compute", "IPv4", List.of(port("metrics", 9090), port("grpc", 7001)),
                ready("127.0.0.2", "w-1")));
        CandidateRecorder listener = new CandidateRecorder();

        start(Map.of("port", "9090"), listener);

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(listener.latest()))
                .containsExactly("grpc://127.0.0.2:9090"));
    }

    @Test
    void skipsASliceWithSeveralPortsWhenNoPortIsConfiguredAndPublishesTheOthers() {
        create(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        create(slice("workers-b", "compute", "IPv4", List.of(port("metrics", 9090), port("grpc", 7001)),
                ready("127.0.0.3", "w-2")));
        CandidateRecorder listener = new CandidateRecorder();

        KubernetesWorkerDiscovery discovery = start(Map.of(), listener);

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(listener.latest()))
                .containsExactly("grpc://127.0.0.2:7001"));
        assertThat(discovery.problems()).singleElement().asString()
                .contains("EndpointSlice workers/workers-b")
                .contains("metrics=9090, grpc=7001")
                .contains("rollcall.discovery.k8s.port");
    }

    @Test
    void countsAnEndpointWithoutReadyConditionAsReady() {
        Endpoint unknown = new EndpointBuilder().withAddresses("127.0.0.2").build();
        Endpoint readyUnset = endpoint("127.0.0.3", "w-2", null, null);
        create(ipv4("workers-a", "compute", 7001, unknown, readyUnset));
        CandidateRecorder listener = new CandidateRecorder();

        start(Map.of(), listener);

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(listener.latest()))
                .containsExactlyInAnyOrder("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001"));
    }

    @Test
    void aDualStackServiceGivesOneCandidatePerPodOfTheConfiguredFamily() {
        // As the EndpointSlice controller writes a dual-stack service: one slice per family, the same pods.
        create(ipv4("workers-v4", "compute", 7001, ready("127.0.0.2", "w-1"), ready("127.0.0.3", "w-2")));
        create(slice("workers-v6", "compute", "IPv6", List.of(port("grpc", 7001)),
                ready("::1", "w-1"), ready("::ffff:127.0.0.3", "w-2")));
        CandidateRecorder byDefault = new CandidateRecorder();
        CandidateRecorder ipv6 = new CandidateRecorder();
        CandidateRecorder ipv4Only = new CandidateRecorder();

        start(Map.of("scheme", "grpcs"), byDefault);
        start(Map.of("ip-family", "PreferIPv6"), ipv6);
        start(Map.of("ip-family", "IPv4"), ipv4Only);

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(byDefault.latest()))
                .containsExactlyInAnyOrder("grpcs://127.0.0.2:7001", "grpcs://127.0.0.3:7001"));
        assertThat(byDefault.latest()).allSatisfy(e -> assertThat(e.tls()).isTrue());
        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(ipv6.latest()))
                .containsExactlyInAnyOrder("grpc://[::1]:7001", "grpc://[::ffff:127.0.0.3]:7001"));
        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(ipv4Only.latest()))
                .containsExactlyInAnyOrder("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001"));

        // A pod that has only an IPv6 address (its IPv4 endpoint not written yet) falls back to it.
        create(slice("workers-v6-b", "compute", "IPv6", List.of(port("grpc", 7001)), ready("::ffff:127.0.0.4", "w-3")));
        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(byDefault.latest()))
                .containsExactlyInAnyOrder("grpcs://127.0.0.2:7001", "grpcs://127.0.0.3:7001",
                        "grpcs://[::ffff:127.0.0.4]:7001"));
        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(ipv4Only.latest())).hasSize(2));
    }

    @Test
    void aTerminatingPodThatStillServesIsDeliveredDrainingUntilItStopsServing() {
        create(ipv4("workers-a", "compute", 7001,
                Slices.conditions("127.0.0.2", "w-1", true, true, false),
                Slices.conditions("127.0.0.3", "w-2", true, true, false)));
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of(), listener);
        await().atMost(WITHIN).until(() -> urls(listener.latest()).size() == 2);

        // A rolling update: both pods shut down, still answering while they finish their work.
        update(ipv4("workers-a", "compute", 7001,
                Slices.conditions("127.0.0.2", "w-1", false, true, true),
                Slices.conditions("127.0.0.3", "w-2", false, true, true)));
        await().atMost(WITHIN).untilAsserted(() -> assertThat(listener.latest()).hasSize(2).allSatisfy(e ->
                assertThat(e.labels()).containsEntry("rollcall.state", "draining")
                        .containsEntry("rollcall.instance-id", "uid-" + e.labels().get("pod"))));

        update(ipv4("workers-a", "compute", 7001,
                Slices.conditions("127.0.0.2", "w-1", false, false, true),
                Slices.conditions("127.0.0.3", "w-2", false, true, true)));
        await().atMost(WITHIN).until(() -> urls(listener.latest()).equals(Set.of("grpc://127.0.0.3:7001")));
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void resyncLooksAtTheCacheAgainButPublishesNothingWhenNothingChanged() {
        create(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        CandidateRecorder listener = new CandidateRecorder();
        KubernetesWorkerDiscovery discovery = start(Map.of("resync", "1s"), listener);
        await().atMost(WITHIN).until(() -> listener.latest() != null);
        long evaluated = discovery.evaluations();

        await().atMost(WITHIN).until(() -> discovery.evaluations() >= evaluated + 2);

        assertThat(listener.sets()).hasSize(1);
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void reportsAForbiddenListWithThePermissionsNeededAndPublishesOnceAllowed() {
        create(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        api.forbidAll(true);
        CandidateRecorder listener = new CandidateRecorder();

        start(Map.of(), listener);

        await().atMost(WITHIN).untilAsserted(() -> assertThat(listener.errors()).isNotEmpty());
        assertThat(listener.errors().get(0)).hasMessageContaining("service workers/compute")
                .hasMessageContaining("HTTP 403")
                .hasMessageContaining("list and watch on endpointslices.discovery.k8s.io");
        assertThat(listener.sets()).isEmpty();

        api.forbidAll(false);       // RBAC fixed: no restart needed
        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(listener.latest()))
                .containsExactly("grpc://127.0.0.2:7001"));
    }

    @Test
    void reportsAnApiServerThatNeverAnswersWithinTheRequestTimeout() {
        try (UnresponsiveWorker hung = UnresponsiveWorker.start()) {
            CandidateRecorder listener = new CandidateRecorder();
            Map<String, String> keys = Map.of("master", "http://127.0.0.1:" + hung.endpoint().port(),
                    "request-timeout", "500ms");

            start(keys, listener);      // returns at once: connecting happens on the backend's thread

            await().atMost(WITHIN).untilAsserted(() -> assertThat(listener.errors()).isNotEmpty());
            // A timeout, said as one (not the closed connection it leaves behind), naming the server.
            assertThat(listener.errors().get(0)).hasMessageContaining("http://127.0.0.1:" + hung.endpoint().port())
                    .hasMessageContaining("no answer within 500 ms (request-timeout)");
            assertThat(listener.sets()).isEmpty();
            assertThat(hung.connectionsAccepted()).isPositive();
        }
    }

    @Test
    void sliceDeletedWhileTheApiServerWasAwayIsGoneAfterItReturns() {
        create(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        create(ipv4("workers-b", "compute", 7002, ready("127.0.0.3", "w-2")));
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of(), listener);
        await().atMost(WITHIN).until(() -> urls(listener.latest())
                .equals(Set.of("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7002")));

        api.stop();
        await().atMost(WITHIN).until(() -> !listener.errors().isEmpty());
        api.throughAnotherReplica(other -> other.discovery().v1().endpointSlices().inNamespace(NS)
                .withName("workers-b").delete());
        api.restart();

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(listener.latest()))
                .containsExactly("grpc://127.0.0.2:7001"));
        assertThat(api.goneAnswers()).as("the resumed watch was refused with 410 Gone, so the backend re-listed")
                .isPositive();
    }

    @Test
    void routineWatchTimeoutsAreNeitherErrorsNorLosses() {
        api.endWatchesAfter(Duration.ofMillis(300));   // kube-apiserver ends each watch after timeoutSeconds
        create(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of(), listener);
        await().atMost(WITHIN).until(() -> urls(listener.latest()).equals(Set.of("grpc://127.0.0.2:7001")));

        for (int i = 3; i <= 5; i++) {
            int watchesEnded = api.watchesEnded();
            await().atMost(WITHIN).until(() -> api.watchesEnded() > watchesEnded);
            update(ipv4("workers-a", "compute", 7001, ready("127.0.0." + i, "w-" + i)));
            String expected = "grpc://127.0.0." + i + ":7001";
            await().atMost(WITHIN).until(() -> urls(listener.latest()).equals(Set.of(expected)));
        }
        assertThat(listener.errors()).as("a watch that ends and is re-opened is routine").isEmpty();
    }

    @Test
    void bookmarksLetTheWatchResumeAfterAnApiServerRestartWithoutARelist() {
        create(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of(), listener);
        await().atMost(WITHIN).until(() -> urls(listener.latest()).equals(Set.of("grpc://127.0.0.2:7001")));
        // Other services' slices move the resource version; a label-filtered watch never sees them.
        for (int i = 0; i < 3; i++) {
            create(ipv4("storage-" + i, "storage", 7001, ready("127.0.0.9", "s-" + i)));
        }
        api.sendBookmarks(true);
        int sent = api.bookmarksSent();
        await().atMost(WITHIN).until(() -> api.bookmarksSent() > sent + 3);

        api.restart();      // its watch cache starts at the newest version: older ones get 410 Gone
        update(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1"), ready("127.0.0.3", "w-2")));

        await().atMost(WITHIN).until(() -> urls(listener.latest())
                .equals(Set.of("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001")));
        assertThat(api.goneAnswers()).as("the watch resumed from the bookmark's version, not an older one").isZero();
    }

    @Test
    void aListSlowerThanTheStaleThresholdIsReportedAndTheChangesMadeMeanwhileFollow() {
        create(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1")));
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of(), listener);      // FAST timings: stale after 1 s without a watch
        await().atMost(WITHIN).until(() -> urls(listener.latest()).equals(Set.of("grpc://127.0.0.2:7001")));

        create(ipv4("storage-a", "storage", 7001, ready("127.0.0.9", "s-1")));    // moves the resource version on
        api.delayLists(Duration.ofSeconds(3));
        api.restart();      // down for a moment only; the watch resumes with 410 Gone and the re-list takes 3 s
        update(ipv4("workers-a", "compute", 7001, ready("127.0.0.2", "w-1"), ready("127.0.0.3", "w-2")));

        Set<String> both = Set.of("grpc://127.0.0.2:7001", "grpc://127.0.0.3:7001");
        await().atMost(WITHIN).until(() -> urls(listener.latest()).equals(both) && !listener.stale());
        // Read from the recorded order, not from the latest set when the test thread wakes: on a loaded
        // machine the re-list may have finished by then.
        List<CandidateRecorder.Event> events = listener.events();
        int firstError = indexOf(events, e -> e.error() != null);
        int relisted = indexOf(events, e -> e.set() != null && urls(e.set()).equals(both));
        assertThat(firstError).as("the slow list is reported before its set arrives: %s", events)
                .isNotNegative().isLessThan(relisted);
        assertThat(events.subList(firstError, relisted)).as("the last set is kept meanwhile: nothing is published"
                + " but the old set between the report and the re-list's set").allMatch(e -> e.error() != null || urls(e.set()).equals(Set.of("grpc://127.0.0.2:7001")));
        assertThat(api.goneAnswers()).as("it was a re-list").isPositive();
    }

    // ---- helpers

    static int indexOf(List<CandidateRecorder.Event> events, Predicate<CandidateRecorder.Event> which) {
        for (int i = 0; i < events.size(); i++) {
            if (which.test(events.get(i))) {
                return i;
            }
        }
        return -1;
    }

    void create(EndpointSlice slice) {
        api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(slice).create();
    }

    void update(EndpointSlice slice) {
        api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(slice).update();
    }

    KubernetesWorkerDiscovery start(Map<String, String> keys, CandidateRecorder listener) {
        KubernetesWorkerDiscovery discovery = new KubernetesWorkerDiscovery(options(keys));
        started.add(discovery);
        discovery.start(listener);
        return discovery;
    }

    KubernetesSettings options(Map<String, String> keys) {
        Map<String, String> all = new HashMap<>();
        all.put("service", "compute");
        all.put("namespace", NS);
        all.put("master", api.url());
        all.putAll(keys);
        return new KubernetesWorkerDiscoveryProvider().options(Settings.of(prefixed(all)).scope(PREFIX)).withTimings(FAST);
    }

    static Map<String, String> prefixed(Map<String, String> keys) {
        Map<String, String> full = new HashMap<>();
        keys.forEach((k, v) -> full.put(PREFIX + k, v));
        return full;
    }

    /** The URLs of a published set; empty before the first one. */
    static Set<String> urls(Set<WorkerEndpoint> set) {
        return set == null ? Set.of() : set.stream().map(WorkerEndpoint::url).collect(Collectors.toSet());
    }
}
