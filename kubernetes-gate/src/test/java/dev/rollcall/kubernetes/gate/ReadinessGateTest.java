package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import io.fabric8.kubernetes.api.model.PodCondition;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The gate's verdict on real loopback workers, written on pods the mock API server holds. */
class ReadinessGateTest {

    private static final Duration WITHIN = Duration.ofSeconds(20);

    private MockCluster cluster;
    private WorkerFleet fleet;

    @BeforeEach
    void start() {
        cluster = MockCluster.start();
        fleet = WorkerFleet.start("1.4.0", "2.0.0");
    }

    @AfterEach
    void stop() {
        cluster.close();
        fleet.close();
    }

    @Test
    void aCompatiblePodTurnsTrueAndARejectedOneFalseWithThePolicysReason() throws Exception {
        cluster.addGatedPod("w-good", "1.4.0", fleet.worker(0).endpoint().port());
        cluster.addGatedPod("w-bad", "2.0.0", fleet.worker(1).endpoint().port());
        RollcallConfig config = config();

        try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
             KubernetesGate gate = KubernetesGate.start(resolver, config).orElseThrow()) {
            await().atMost(WITHIN).ignoreException(java.util.NoSuchElementException.class).untilAsserted(() -> {
                PodCondition good = cluster.gate("w-good").orElseThrow();
                assertThat(good.getStatus()).isEqualTo("True");
                assertThat(good.getReason()).isEqualTo("Compatible");
                PodCondition bad = cluster.gate("w-bad").orElseThrow();
                assertThat(bad.getStatus()).isEqualTo("False");
                assertThat(bad.getReason()).isEqualTo("Incompatible");
                assertThat(bad.getMessage()).contains("2.0.0").contains("^1.0.0");
            });
            // The kubelet's own conditions are kept: the patch tested the pod it was computed from.
            assertThat(cluster.pod("w-good").getStatus().getConditions()).extracting(PodCondition::getType)
                    .contains("ContainersReady", "Ready", MockCluster.GATE);
        }
    }

    private RollcallConfig config() {
        return cluster.gateConfig(Map.of());
    }
}
