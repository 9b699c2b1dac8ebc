package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.kubernetes.gate.internal.PodPatches;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.FinestLogCapture;
import dev.rollcall.testkit.faults.FaultProxy;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The API server goes silent with its sockets open (a fault proxy in front of the mock swallows every
 * byte): the gate's writes time out after {@code rollcall.discovery.k8s.request-timeout}, the
 * resolver's listeners keep getting every snapshot meanwhile, and the writes land once it answers.
 */
class SilentApiServerTest {

    private static final Duration WITHIN = Duration.ofSeconds(30);

    private MockCluster cluster;
    private FaultProxy proxy;

    @BeforeEach
    void start() {
        cluster = MockCluster.start();
        proxy = FaultProxy.to(cluster.port());
    }

    @AfterEach
    void stop() {
        proxy.close();
        cluster.close();
    }

    @Test
    void aSilentApiServerTimesTheWritesOutBlocksNoListenerAndIsWrittenOnceItAnswers() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0");
             FinestLogCapture log = new FinestLogCapture()) {
            int port = fleet.worker(0).endpoint().port();
            cluster.addGatedPod("w-0", "1.4.0", port);
            cluster.slice("w-0", port, true);
            RollcallConfig config = RollcallConfig.of(Map.of(
                    "rollcall.discovery.type", "k8s",
                    "rollcall.discovery.k8s.service", MockCluster.SERVICE,
                    "rollcall.discovery.k8s.namespace", MockCluster.NS,
                    "rollcall.discovery.k8s.master", "http://" + proxy.hostAndPort(),
                    "rollcall.discovery.k8s.request-timeout", "1s",
                    "rollcall.policy.type", "semver",
                    "rollcall.policy.semver.range", "^1.0.0",
                    "rollcall.kubernetes.readiness-gate", MockCluster.GATE,
                    "rollcall.kubernetes.pod-deletion-cost", "true"));
            try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
                 KubernetesGate gate = KubernetesGate.start(resolver, config).orElseThrow()) {
                // Verified: True, and the cost it had while not verified yet (-100) cleared.
                await().atMost(WITHIN).until(() -> cluster.gate("w-0").map(c -> c.getStatus()).orElse("")
                        .equals("True") && cost(cluster.pod("w-0")) == null);
                // Listens after the gate: were the gate's listener stuck, this one would hear nothing.
                List<WorkerStatus.State> heard = new CopyOnWriteArrayList<>();
                resolver.addListener(snapshot -> heard.add(state(snapshot)));

                proxy.blackhole();
                fleet.worker(0).drain();
                await().atMost(WITHIN).until(() -> heard.contains(WorkerStatus.State.DRAINING));
                fleet.worker(0).resume();
                await().atMost(WITHIN).until(() -> heard.get(heard.size() - 1) == WorkerStatus.State.COMPATIBLE);
                fleet.worker(0).drain();
                await().atMost(WITHIN).until(() -> heard.get(heard.size() - 1) == WorkerStatus.State.DRAINING);
                // The write of the draining pod's cost was tried, and gave up after the request timeout.
                await().atMost(WITHIN).until(() -> log.text().contains("k8s gate: cannot patch pods of pod compute/w-0"));
                assertThat(cost(cluster.pod("w-0"))).isNull();

                proxy.pass();
                await().atMost(WITHIN).until(() -> "-200".equals(cost(cluster.pod("w-0"))));
                assertThat(cluster.gate("w-0").orElseThrow().getStatus()).isEqualTo("True");
                assertThat(log.text()).contains("k8s gate: patching pods in namespace compute works again");
            }
        }
    }

    private static WorkerStatus.State state(FleetSnapshot snapshot) {
        return snapshot.statuses().isEmpty() ? WorkerStatus.State.PENDING : snapshot.statuses().get(0).state();
    }

    private static String cost(Pod pod) {
        return pod.getMetadata().getAnnotations() == null ? null
                : pod.getMetadata().getAnnotations().get(PodPatches.DELETION_COST);
    }
}
