package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.kubernetes.gate.internal.PodPatches;
import dev.rollcall.kubernetes.gate.internal.PodWrites;
import dev.rollcall.kubernetes.gate.internal.Verdicts;
import dev.rollcall.local.WorkerFleet;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The gate writes only to the pods that ask for it (they declare it in {@code spec.readinessGates}) and
 * only to the very pod discovery saw (its UID): an EndpointSlice written by hand that names another
 * pod of the namespace, or a pod replaced under the same name, gets nothing.
 */
class OnlyPodsThatAskTest {

    private static final Duration WITHIN = Duration.ofSeconds(30);

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
    void aForgedSliceNamingAPodThatDoesNotDeclareTheGateNeverGetsItsConditionNorItsDeletionCost() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("2.0.0", "2.0.0")) {
            cluster.addGatedPod("w-new", "2.0.0", fleet.worker(0).endpoint().port());
            cluster.slice("w-new", fleet.worker(0).endpoint().port(), true);
            cluster.addPlainPod("db-0");
            // Someone's hand-written slice: a worker's address, and the database pod's name and very UID.
            cluster.forgedSlice("by-hand", "db-0", cluster.pod("db-0").getMetadata().getUid(),
                    fleet.worker(1).endpoint().port());
            RollcallConfig config = config(true);

            AtomicLong offered = new AtomicLong(-1);
            try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
                 PodWrites writes = new PodWrites(client, MockCluster.NS, MockCluster.GATE, 20, Clock.systemUTC())) {
                writes.start();
                writes.lead(true);
                // As KubernetesGate listens, noting which snapshot was offered.
                resolver.addListener(snapshot -> {
                    writes.offer(Verdicts.of(snapshot, resolver.policy(), true));
                    offered.set(snapshot.number());
                });
                FleetSnapshot lied = resolver.await(s -> s.statuses().stream().filter(st -> "db-0".equals(
                        st.endpoint().labels().get("pod"))).anyMatch(st -> st.state() == WorkerStatus.State.REJECTED)
                        && s.statuses().stream().filter(st -> st.state() == WorkerStatus.State.REJECTED).count() == 2,
                        WITHIN);
                await().atMost(WITHIN).until(() -> offered.get() >= lied.number() && writes.idle()
                        && "-100".equals(costOf(cluster.pod("w-new"))));

                assertThat(cluster.gate("w-new")).get().extracting(PodCondition::getStatus).isEqualTo("False");
                assertThat(cluster.api().patchesOf("db-0")).isEmpty();
                Pod db = cluster.pod("db-0");
                assertThat(costOf(db)).isNull();
                assertThat(db.getStatus().getConditions()).extracting(PodCondition::getType)
                        .containsExactly("ContainersReady", "Ready");
            }
        }
    }

    @Test
    void aPodReplacedUnderTheSameNameOrNamedWithoutAUidGetsNothingMeantForAnother() {
        cluster.addGatedPod("w-1", "1.4.0", 1);
        cluster.addGatedPod("w-2", "1.4.0", 2);
        String oldUid = cluster.pod("w-1").getMetadata().getUid();
        client.pods().inNamespace(MockCluster.NS).withName("w-1").withGracePeriod(0).delete();
        await().atMost(WITHIN).until(() -> cluster.pod("w-1") == null);
        cluster.addGatedPod("w-1", "2.0.0", 1);
        String newUid = cluster.pod("w-1").getMetadata().getUid();
        assertThat(newUid).isNotEqualTo(oldUid);

        SyntheticFleet fleet = new SyntheticFleet().run("w-1", oldUid, "1.4.0").run("w-2", "", "1.4.0");
        try (PodWrites writes = new PodWrites(client, MockCluster.NS, MockCluster.GATE, 20, Clock.systemUTC())) {
            writes.start();
            writes.lead(true);
            await().atMost(WITHIN).until(writes::idle);
            writes.offer(fleet.wishes(true));
            await().atMost(WITHIN).until(writes::idle);
            assertThat(cluster.api().patches()).isEmpty();
            assertThat(cluster.gate("w-1")).isEmpty();
            assertThat(cluster.gate("w-2")).isEmpty();

            // Once discovery reports the pod as it is now, it is written.
            writes.offer(fleet.run("w-1", newUid, "2.0.0").wishes(true));
            await().atMost(WITHIN).until(() -> cluster.gate("w-1").isPresent() && writes.idle());
            assertThat(cluster.gate("w-1").orElseThrow().getReason()).isEqualTo("Incompatible");
            assertThat(cluster.api().patchesOf("w-2")).isEmpty();
        }
    }

    private static String costOf(Pod pod) {
        return pod.getMetadata().getAnnotations() == null ? null
                : pod.getMetadata().getAnnotations().get(PodPatches.DELETION_COST);
    }

    private RollcallConfig config(boolean costs) {
        return cluster.gateConfig(Map.of("rollcall.kubernetes.pod-deletion-cost", String.valueOf(costs)));
    }
}
