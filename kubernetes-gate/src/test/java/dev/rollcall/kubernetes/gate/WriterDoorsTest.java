package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.kubernetes.gate.internal.PodPatches;
import dev.rollcall.kubernetes.gate.internal.PodVerdict;
import dev.rollcall.kubernetes.gate.internal.PodWrites;
import dev.rollcall.kubernetes.gate.internal.Verdicts;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.FinestLogCapture;
import dev.rollcall.testkit.HostileText;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The writer's doors to the API server: a Role without the right (403) gets one clear error naming
 * what to add, retried with backoff while discovery goes on; a pod changed between read and patch is
 * computed again from the newer pod; text made to fool a log (a worker's reason, the API server's
 * own answer) arrives escaped and bounded.
 */
class WriterDoorsTest {

    private static final Duration WITHIN = Duration.ofSeconds(30);

    private MockCluster cluster;
    private KubernetesClient client;

    @BeforeEach
    void start() {
        cluster = MockCluster.start();
        client = gateClient();
    }

    @AfterEach
    void stop() {
        client.close();
        cluster.close();
    }

    @Test
    void withoutTheRightToPatchPodStatusOneErrorSaysWhatTheRoleNeedsAndDiscoveryGoesOn() throws Exception {
        cluster.api().refuse("pods/status");
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0", "1.4.0");
             FinestLogCapture log = new FinestLogCapture()) {
            for (int i = 0; i < 2; i++) {
                cluster.addGatedPod("w-" + i, "1.4.0", fleet.worker(i).endpoint().port());
                cluster.slice("w-" + i, fleet.worker(i).endpoint().port(), true);
            }
            RollcallConfig config = config();
            try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
                 KubernetesGate gate = KubernetesGate.start(resolver, config).orElseThrow()) {
                assertThat(resolver.awaitWorkers(2, WITHIN).workers()).hasSize(2);
                // Tried again, with backoff: three refusals, each logged no more than the first.
                await().atMost(WITHIN).until(() -> refused("pods/status") >= 3);
                assertThat(occurrences(log.text(), "k8s gate: forbidden to patch pods/status in namespace compute:"
                        + " the Role needs verb \"patch\" on resource \"pods/status\" (deploy/kubernetes/rollcall.yaml)"))
                        .isEqualTo(1);
                assertThat(resolver.workers()).hasSize(2);

                cluster.api().allow("pods/status");
                await().atMost(WITHIN).until(() -> "True".equals(status("w-0")) && "True".equals(status("w-1")));
                assertThat(log.text()).contains("k8s gate: patching pods/status in namespace compute works again");
                assertThat(resolver.workers()).hasSize(2);
            }
        }
    }

    @Test
    void withoutTheRightToPatchPodsTheConditionsLandAndTheDeletionCostsWaitWithoutAStorm() throws Exception {
        SyntheticFleet fleet = new SyntheticFleet();
        for (int i = 0; i < 20; i++) {
            cluster.addGatedPod("w-" + i, "2.0.0", 1000 + i);
            fleet.run(cluster.pod("w-" + i), "2.0.0");
        }
        cluster.api().refuse("pods");
        try (FinestLogCapture log = new FinestLogCapture();
             PodWrites writes = new PodWrites(client, MockCluster.NS, MockCluster.GATE, 100, Clock.systemUTC())) {
            writes.start();
            writes.lead(true);
            await().atMost(WITHIN).until(writes::idle);
            writes.offer(fleet.wishes(true));
            await().atMost(WITHIN).until(() -> cluster.api().patches().stream()
                    .filter(p -> p.resource().equals("pods/status") && p.code() / 100 == 2).count() == 20
                    && refused("pods") >= 2);
            // Twenty pods wait for their cost, yet the door is tried once a backoff, not once a pod.
            assertThat(refused("pods")).isLessThan(20);
            for (int i = 0; i < 20; i++) {
                assertThat(status("w-" + i)).isEqualTo("False");
            }
            assertThat(occurrences(log.text(), "k8s gate: forbidden to patch pods in namespace compute: the Role"
                    + " needs verb \"patch\" on resource \"pods\"")).isEqualTo(1);

            cluster.api().allow("pods");
            await().atMost(WITHIN).until(() -> client.pods().inNamespace(MockCluster.NS).list().getItems().stream()
                    .allMatch(p -> "-100".equals(cost(p))));
        }
    }

    @Test
    void aPodTheKubeletChangedBetweenReadAndPatchIsComputedAgainFromTheNewerPod() {
        cluster.addGatedPod("w-1", "1.4.0", 1001);
        SyntheticFleet fleet = new SyntheticFleet().run(cluster.pod("w-1"), "1.4.0");
        // The kubelet's status update lands after the writer read the pod and before its patch.
        cluster.api().beforeNextPatch("w-1", pod -> cluster.api().patchStatusNow(MockCluster.NS, pod,
                "[{\"op\":\"add\",\"path\":\"/status/podIP\",\"value\":\"127.0.0.1\"}]"));
        try (PodWrites writes = new PodWrites(client, MockCluster.NS, MockCluster.GATE, 20, Clock.systemUTC())) {
            writes.start();
            writes.lead(true);
            await().atMost(WITHIN).until(writes::idle);
            writes.offer(fleet.wishes(false));
            await().atMost(WITHIN).until(() -> "True".equals(status("w-1")) && writes.idle());
        }
        List<Integer> answers = cluster.api().patchesOf("w-1").stream().map(ApiServerLog.Patch::code).toList();
        assertThat(answers).hasSize(2);
        assertThat(answers.get(0)).isIn(409, 422);
        assertThat(answers.get(1) / 100).isEqualTo(2);
        Pod pod = cluster.pod("w-1");
        assertThat(pod.getStatus().getPodIP()).isEqualTo("127.0.0.1");
        assertThat(pod.getStatus().getConditions()).extracting(PodCondition::getType)
                .containsExactly("ContainersReady", "Ready", MockCluster.GATE);
    }

    @Test
    void textMadeToFoolALogArrivesEscapedAndBoundedInTheConditionAndInTheLog() {
        cluster.addGatedPod("w-1", "2.0.0", 1001);
        Pod pod = cluster.pod("w-1");
        String hostile = HostileText.forging("worker reason") + "x".repeat(10_000);
        WorkerEndpoint endpoint = WorkerEndpoint.of("127.0.0.1", 1001).withLabels(Map.of("pod", "w-1",
                WorkerEndpoint.INSTANCE_ID_LABEL, pod.getMetadata().getUid()));
        FleetSnapshot snapshot = FleetSnapshot.builder(1).status(new WorkerStatus(endpoint,
                WorkerStatus.State.REJECTED, hostile, Optional.of(WorkerInfo.of(endpoint, "9.9.9")))).build();
        cluster.api().fail("pods/status", 500, HostileText.forging("api server") + "y".repeat(10_000));
        try (FinestLogCapture log = new FinestLogCapture();
             PodWrites writes = new PodWrites(client, MockCluster.NS, MockCluster.GATE, 20, Clock.systemUTC())) {
            writes.start();
            writes.lead(true);
            await().atMost(WITHIN).until(writes::idle);
            writes.offer(Verdicts.of(snapshot, SyntheticFleet.POLICY, false));
            await().atMost(WITHIN).until(() -> cluster.api().patchesOf("w-1").size() >= 1);
            cluster.api().allow("pods/status");
            await().atMost(WITHIN).until(() -> "False".equals(status("w-1")) && writes.idle());

            String message = cluster.gate("w-1").orElseThrow().getMessage();
            assertThat(PeerText.isClean(message)).as(message).isTrue();
            // Each character kept escapes to at most six ("\\u0085"); then "...(N more)".
            assertThat(message).startsWith("worker reason\\n").endsWith("more)")
                    .hasSizeLessThan(6 * PodVerdict.MAX_MESSAGE_CHARS + 32);
            assertThat(log.text()).contains("k8s gate: cannot patch pods/status of pod compute/w-1: HTTP 500")
                    .contains("api server\\n");
            assertThat(HostileText.rawInLog(log.text())).isEmpty();
            assertThat(log.text().lines().filter(l -> l.contains("yyyy")).mapToInt(String::length).max().orElse(0))
                    .isLessThan(2_000);
        }
    }

    /** A client as KubernetesAccess builds it: no retries of its own at the HTTP layer. */
    private KubernetesClient gateClient() {
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl(cluster.url()).withNamespace(MockCluster.NS)
                .withRequestRetryBackoffLimit(0).withRequestTimeout(5_000).build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    private long refused(String resource) {
        return cluster.api().patches().stream().filter(p -> p.resource().equals(resource) && p.code() == 403).count();
    }

    private String status(String pod) {
        return cluster.gate(pod).map(PodCondition::getStatus).orElse(null);
    }

    private static String cost(Pod pod) {
        return pod.getMetadata().getAnnotations() == null ? null
                : pod.getMetadata().getAnnotations().get(PodPatches.DELETION_COST);
    }

    private static int occurrences(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    private RollcallConfig config() {
        return cluster.gateConfig(Map.of());
    }
}
