package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.kubernetes.gate.internal.PodPatches;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.local.WorkerFleet;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A real worker that drains and resumes every millisecond (its verdict flapping between compatible
 * and draining, so its wished deletion cost between none and the lowest): the gate's patches stay
 * within {@code writes-per-second} plus the burst, and the pod ends at the worker's last word (once
 * the resolver, which damps a flapping worker, publishes it).
 */
class FlappingWorkerGateTest {

    private static final Duration WITHIN = Duration.ofSeconds(30);
    /** The resolver holds a flapping worker out of new snapshots for up to 30 s after its last change. */
    private static final Duration PAST_DAMPING = Duration.ofSeconds(60);
    private static final int PER_SECOND = 10;

    @Test
    void aWorkerFlappingEveryMillisecondCostsAtMostTheBudgetAndItsPodEndsAtItsLastWord() throws Exception {
        try (MockCluster cluster = MockCluster.start();
             WorkerFleet fleet = WorkerFleet.start("1.4.0")) {
            FleetWorker worker = fleet.worker(0);
            cluster.addGatedPod("w-0", "1.4.0", worker.endpoint().port());
            cluster.slice("w-0", worker.endpoint().port(), true);
            RollcallConfig config = cluster.gateConfig(Map.of("rollcall.kubernetes.pod-deletion-cost", "true",
                    "rollcall.kubernetes.writes-per-second", String.valueOf(PER_SECOND)));
            try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
                 KubernetesGate gate = KubernetesGate.start(resolver, config).orElseThrow()) {
                await().atMost(WITHIN).until(() -> cluster.gate("w-0").map(c -> c.getStatus()).orElse("")
                        .equals("True"));
                ScheduledExecutorService flapper = Executors.newSingleThreadScheduledExecutor();
                AtomicInteger flips = new AtomicInteger();
                try {
                    flapper.scheduleAtFixedRate(() -> {
                        if (flips.incrementAndGet() % 2 == 1) {
                            worker.drain();
                        } else {
                            worker.resume();
                        }
                    }, 0, 1, TimeUnit.MILLISECONDS);
                    await().atMost(WITHIN).until(() -> flips.get() >= 300);
                } finally {
                    flapper.shutdownNow();
                    flapper.awaitTermination(5, TimeUnit.SECONDS);
                }
                worker.drain();
                // The resolver's last word, once it stops damping the worker: draining.
                await().atMost(PAST_DAMPING).until(() -> "-200".equals(cost(cluster)));
                assertThat(cluster.gate("w-0").orElseThrow().getStatus()).isEqualTo("True");
                assertThat(gate.patches()).isEqualTo(cluster.api().patches().size());
            }
            assertThat(cluster.api().mostInOneSecond()).isLessThanOrEqualTo(2 * PER_SECOND + 1);
        }
    }

    private static String cost(MockCluster cluster) {
        var annotations = cluster.pod("w-0").getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(PodPatches.DELETION_COST);
    }
}
