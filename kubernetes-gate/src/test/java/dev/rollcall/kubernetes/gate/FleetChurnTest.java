package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.kubernetes.gate.internal.PodVerdict;
import dev.rollcall.kubernetes.gate.internal.PodWrites;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A fleet of a thousand gated pods on the mock API server, their verdicts churning: the writer sends a
 * patch only where a pod differs from its wish, coalesces what changes faster than it may write, and
 * never sends more than {@code writes-per-second} a second plus the burst of one second's worth.
 */
class FleetChurnTest {

    private static final Duration WITHIN = Duration.ofSeconds(60);
    private static final int PODS = 1_000;
    private static final int PER_SECOND = 50;
    /** A request's time on the wire differs a little between patches; the server counts arrivals. */
    private static final int ARRIVAL_JITTER = 1;

    private MockCluster cluster;
    private KubernetesClient client;

    @BeforeEach
    void start() {
        cluster = MockCluster.start();
        client = cluster.newClient();
    }

    @AfterEach
    void stop() {
        client.close();
        cluster.close();
    }

    @Test
    void aThousandPodsChurningArePatchedOnlyOnChangeAndNeverFasterThanTheBudget() {
        List<Pod> pods = settledGatedPods(PODS, "1.4.0");
        SyntheticFleet fleet = new SyntheticFleet();
        pods.forEach(p -> fleet.run(p, "1.4.0"));

        try (PodWrites writes = new PodWrites(client, MockCluster.NS, MockCluster.GATE, PER_SECOND, Clock.systemUTC())) {
            writes.start();
            writes.lead(true);
            await().atMost(WITHIN).until(writes::idle);

            // Already as wished (a restarted replica, say): nothing to write.
            writes.offer(fleet.wishes(false));
            await().atMost(WITHIN).until(writes::idle);
            assertThat(cluster.api().patches()).isEmpty();

            // 200 pods roll to a rejected version: 200 patches, one each.
            Set<String> rejected = new HashSet<>();
            for (int i = 0; i < 200; i++) {
                fleet.run(pods.get(i * 5), "2.0.0");
                rejected.add(pods.get(i * 5).getMetadata().getName());
            }
            writes.offer(fleet.wishes(false));
            await().atMost(WITHIN).until(() -> writes.idle() && cluster.api().patches().size() >= 200);
            assertThat(cluster.api().patches()).hasSize(200)
                    .allSatisfy(p -> assertThat(p.resource()).isEqualTo("pods/status"))
                    .extracting(ApiServerLog.Patch::pod).containsExactlyInAnyOrderElementsOf(rejected);
            assertConditions(rejected);

            // The same wishes again, twice: nothing.
            writes.offer(fleet.wishes(false));
            writes.offer(fleet.wishes(false));
            await().atMost(WITHIN).until(writes::idle);
            assertThat(cluster.api().patches()).hasSize(200);

            // 100 of them back, 100 others away: 200 more.
            for (int i = 0; i < 100; i++) {
                fleet.run(pods.get(i * 5), "1.4.0");
                rejected.remove(pods.get(i * 5).getMetadata().getName());
                fleet.run(pods.get(i * 5 + 1), "2.0.0");
                rejected.add(pods.get(i * 5 + 1).getMetadata().getName());
            }
            writes.offer(fleet.wishes(false));
            await().atMost(WITHIN).until(() -> writes.idle() && cluster.api().patches().size() >= 400);
            assertThat(cluster.api().patches()).hasSize(400).allSatisfy(p -> assertThat(p.code()).isBetween(200, 299));
            assertConditions(rejected);
            assertThat(writes.patches()).isEqualTo(400);
        }
        assertThat(cluster.api().mostInOneSecond()).isLessThanOrEqualTo(2 * PER_SECOND + ARRIVAL_JITTER);
    }

    @Test
    void verdictsFlappingEveryMillisecondCostAtMostTheBudgetAndEndAtTheLastVerdict() throws Exception {
        List<Pod> pods = settledGatedPods(20, "1.4.0");
        SyntheticFleet fleet = new SyntheticFleet();
        pods.forEach(p -> fleet.run(p, "1.4.0"));
        int perSecond = 20;
        int flips = 2_000;
        try (PodWrites writes = new PodWrites(client, MockCluster.NS, MockCluster.GATE, perSecond, Clock.systemUTC())) {
            writes.start();
            writes.lead(true);
            await().atMost(WITHIN).until(writes::idle);
            ScheduledExecutorService flapper = Executors.newSingleThreadScheduledExecutor();
            AtomicInteger offered = new AtomicInteger();
            try {
                flapper.scheduleAtFixedRate(() -> {
                    int n = offered.get();
                    if (n < flips) {
                        String version = n % 2 == 0 ? "2.0.0" : "1.4.0";
                        pods.forEach(p -> fleet.run(p, version));
                        writes.offer(fleet.wishes(false));
                        offered.incrementAndGet();
                    }
                }, 0, 1, TimeUnit.MILLISECONDS);
                await().atMost(WITHIN).until(() -> offered.get() == flips);
            } finally {
                flapper.shutdownNow();
            }
            // The last of the 2,000 said 1.4.0 (compatible); then one more, rejected, that stays.
            pods.forEach(p -> fleet.run(p, "2.0.0"));
            writes.offer(fleet.wishes(false));
            await().atMost(WITHIN).until(writes::idle);
            assertConditions(pods.stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet()));
        }
        assertThat(cluster.api().mostInOneSecond()).isLessThanOrEqualTo(2 * perSecond + ARRIVAL_JITTER);
        assertThat(cluster.api().patches()).allSatisfy(p -> assertThat(p.code()).isBetween(200, 299));
    }

    @Test
    void podsWhoseConditionAndCostBothChangeGetTwoPatchesEachAndNoneIsSentAgainstAnOlderPod() {
        List<Pod> pods = settledGatedPods(20, "1.4.0");
        SyntheticFleet fleet = new SyntheticFleet();
        pods.forEach(p -> fleet.run(p, "2.0.0"));
        try (PodWrites writes = new PodWrites(client, MockCluster.NS, MockCluster.GATE, PER_SECOND, Clock.systemUTC())) {
            writes.start();
            writes.lead(true);
            await().atMost(WITHIN).until(writes::idle);
            writes.offer(fleet.wishes(true));
            await().atMost(WITHIN).until(() -> writes.idle() && cluster.api().patches().size() >= 40);
            assertConditions(pods.stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet()));
        }
        // Each pod: the condition, then the cost computed from the pod the first patch returned.
        assertThat(cluster.api().patches()).hasSize(40).allSatisfy(p -> assertThat(p.code()).isBetween(200, 299));
        assertThat(client.pods().inNamespace(MockCluster.NS).list().getItems()).allSatisfy(p ->
                assertThat(p.getMetadata().getAnnotations()).containsEntry(
                        dev.rollcall.kubernetes.gate.internal.PodPatches.DELETION_COST, "-100"));
    }

    /** Every pod of the list is rejected ({@code False}, Incompatible), every other pod {@code True}. */
    private void assertConditions(Set<String> rejected) {
        for (Pod pod : client.pods().inNamespace(MockCluster.NS).list().getItems()) {
            PodCondition gate = pod.getStatus().getConditions().stream()
                    .filter(c -> MockCluster.GATE.equals(c.getType())).findFirst().orElseThrow();
            String name = pod.getMetadata().getName();
            assertThat(gate.getStatus()).as(name).isEqualTo(rejected.contains(name) ? "False" : "True");
            assertThat(gate.getReason()).as(name).isEqualTo(rejected.contains(name) ? "Incompatible" : "Compatible");
        }
    }

    /**
     * {@code count} gated pods whose gate already says what the gate would wish for {@code version}
     * (the fleet as a writer left it), each with its endpoint in the service's EndpointSlices.
     */
    private List<Pod> settledGatedPods(int count, String version) {
        PodVerdict settled = new SyntheticFleet().run("p", "u", version).wishes(false).get("p");
        for (int i = 0; i < count; i++) {
            String name = String.format("w-%04d", i);
            client.pods().inNamespace(MockCluster.NS).resource(new PodBuilder()
                    .withNewMetadata().withName(name).withNamespace(MockCluster.NS)
                        .addToLabels("app.kubernetes.io/name", MockCluster.SERVICE).endMetadata()
                    .withNewSpec().addNewReadinessGate().withConditionType(MockCluster.GATE).endReadinessGate()
                        .addNewContainer().withName("worker").withImage("worker:" + version).endContainer()
                    .endSpec()
                    .withNewStatus().withPhase("Running")
                        .addNewCondition().withType("ContainersReady").withStatus("True").endCondition()
                        .addNewCondition().withType("Ready").withStatus("True").endCondition()
                        .addNewCondition().withType(MockCluster.GATE).withStatus("True")
                            .withReason(settled.reason()).withMessage(settled.message())
                            .withLastTransitionTime("2026-12-01T00:00:00Z").endCondition()
                    .endStatus()
                    .build()).create();
        }
        List<Pod> pods = client.pods().inNamespace(MockCluster.NS).list().getItems();
        assertThat(pods).hasSize(count);
        return pods.stream().sorted(java.util.Comparator.comparing(p -> p.getMetadata().getName()))
                .collect(Collectors.toList());
    }
}
