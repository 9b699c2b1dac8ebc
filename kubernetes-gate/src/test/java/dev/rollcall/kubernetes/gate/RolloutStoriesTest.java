package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import io.fabric8.kubernetes.api.model.PodCondition;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The rollout stories, end to end: {@code rollcall serve}'s resolver and gate on real
 * loopback workers, a Deployment of three gated worker pods rolled by {@link DeploymentSimulator}
 * ({@code maxSurge: 1, maxUnavailable: 0}) on the mock API server. What a user depends on: a
 * compatible rollout goes through, each new pod let in as soon as Rollcall has verified it; a
 * rollout to a version the policy rejects stops at its first pod, with the policy's reason on it
 * and nothing taken down; under {@code rollout} the new cohort's pods are let in before it is chosen
 * (or the rollout would wait for itself), and then the old cohort goes first on a scale-down.
 */
class RolloutStoriesTest {

    /** A bound on a failing story, not a speed asserted. */
    private static final Duration WITHIN = Duration.ofSeconds(60);
    private static final int REPLICAS = 3;

    private MockCluster cluster;
    private WorkerFleet fleet;
    private DeploymentSimulator deployment;

    @BeforeEach
    void start() {
        cluster = MockCluster.start();
        fleet = WorkerFleet.start();
        deployment = new DeploymentSimulator(cluster, fleet);
    }

    @AfterEach
    void stop() {
        deployment.close();
        cluster.close();
        fleet.close();
    }

    /**
     * "Within one publish": the snapshot current when the kubelet sees the new pod's gate turn
     * {@code True} is the very snapshot in which the resolver first published the pod compatible
     * (number n): the gate wrote that verdict without waiting for snapshot n+1. Nothing else changes
     * the fleet meanwhile (the Deployment waits for that pod), so a gate that needed a later publish,
     * or wrote from a stale wish, would be seen at a number above n.
     */
    @Test
    void aCompatibleRolloutLetsEachNewPodInWithinOnePublishOfItsVerdictAndCompletesWithoutLosingWorkers()
            throws Exception {
        RollcallConfig config = config(Map.of("rollcall.policy.type", "semver", "rollcall.policy.semver.range", "^1.0.0"));
        try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
             KubernetesGate gate = KubernetesGate.start(resolver, config).orElseThrow()) {
            Map<String, Long> firstCompatible = new ConcurrentHashMap<>();
            AtomicInteger fewestDuringRollout = new AtomicInteger(Integer.MAX_VALUE);
            AtomicBoolean rolling = new AtomicBoolean();
            List<String> timeline = new java.util.concurrent.CopyOnWriteArrayList<>();
            resolver.addListener(snapshot -> {
                for (WorkerStatus status : snapshot.statuses()) {
                    String pod = status.endpoint().labels().get("pod");
                    if (pod != null && status.state() == WorkerStatus.State.COMPATIBLE) {
                        firstCompatible.putIfAbsent(pod, snapshot.number());
                    }
                }
                if (rolling.get()) {
                    fewestDuringRollout.accumulateAndGet(snapshot.workers().size(), Math::min);
                    timeline.add(snapshot.number() + ": " + snapshot.statuses().stream()
                            .map(st -> st.endpoint().labels().get("pod") + "=" + st.state()).sorted().toList());
                }
            });
            Map<String, FleetSnapshot> currentWhenReady = new ConcurrentHashMap<>();
            deployment.onReady(pod -> currentWhenReady.put(pod, resolver.pin()));

            deployment.deploy("1.4.0", REPLICAS);
            List<String> old = deployment.live();
            resolver.await(s -> s.workers().size() == REPLICAS, WITHIN);
            rolling.set(true);
            deployment.rollout("1.5.0").get(WITHIN.toSeconds(), TimeUnit.SECONDS);

            List<String> updated = deployment.live();
            assertThat(updated).hasSize(REPLICAS).allMatch(pod -> pod.startsWith("workers-150-"));
            assertThat(deployment.deleted()).containsExactlyElementsOf(old);
            assertThat(old).allMatch(pod -> cluster.pod(pod) == null);
            assertThat(deployment.status()).isEqualTo("deployment \"workers\" successfully rolled out");
            for (String pod : updated) {
                PodCondition condition = cluster.gate(pod).orElseThrow();
                assertThat(condition.getStatus()).isEqualTo("True");
                assertThat(condition.getReason()).isEqualTo("Compatible");
                assertThat(condition.getMessage()).isEqualTo("version '1.5.0' accepted by semver ^1.0.0");
                FleetSnapshot whenReady = currentWhenReady.get(pod);
                assertThat(state(whenReady, pod)).as(pod).isEqualTo(WorkerStatus.State.COMPATIBLE);
                await().atMost(WITHIN).until(() -> firstCompatible.containsKey(pod));
                assertThat(whenReady.number()).as("%s let in within one publish of its verdict", pod)
                        .isEqualTo(firstCompatible.get(pod));
            }
            await().atMost(WITHIN).until(() -> resolver.pin().workers().stream()
                    .allMatch(w -> w.version().equals("1.5.0")) && resolver.pin().workers().size() == REPLICAS);
            assertThat(fewestDuringRollout.get()).as("compatible workers the coordinators had during the rollout: %s", timeline)
                    .isGreaterThanOrEqualTo(REPLICAS);
        }
    }

    @Test
    void aRolloutToARejectedVersionStopsAtItsFirstPodWithThePolicysReasonAndTakesNothingDown() throws Exception {
        RollcallConfig config = config(Map.of("rollcall.policy.type", "semver", "rollcall.policy.semver.range", "^1.0.0",
                "rollcall.kubernetes.pod-deletion-cost", "true"));
        try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
             KubernetesGate gate = KubernetesGate.start(resolver, config).orElseThrow()) {
            deployment.deploy("1.4.0", REPLICAS);
            List<String> old = deployment.live();
            // Not verified yet, they had -100 too; verified, the chosen cohort's pods carry none.
            await().atMost(WITHIN).until(() -> old.stream()
                    .allMatch(pod -> deployment.latest(pod).deletionCost().isEmpty()));
            int before = deployment.seen().size();

            CompletableFuture<Void> rollout = deployment.rollout("2.0.0");
            String first = "workers-200-" + REPLICAS;
            await().atMost(WITHIN).ignoreExceptions().untilAsserted(() -> {
                PodCondition condition = cluster.gate(first).orElseThrow();
                assertThat(condition.getStatus()).isEqualTo("False");
                assertThat(condition.getReason()).isEqualTo("Incompatible");
                assertThat(condition.getMessage()).isEqualTo("version '2.0.0' is outside ^1.0.0");
                assertThat(cluster.pod(first).getMetadata().getAnnotations())
                        .containsEntry("controller.kubernetes.io/pod-deletion-cost", "-100");
            });

            // Held at its first pod: not Ready, so the Deployment takes no old pod down.
            assertThat(MockCluster.conditionStatus(cluster.pod(first), "Ready")).contains("False");
            assertThat(rollout).isNotDone();
            assertThat(deployment.deleted()).isEmpty();
            assertThat(deployment.live()).containsExactlyElementsOf(concat(old, first));
            assertThat(deployment.status()).isEqualTo(
                    "Waiting for deployment \"workers\" rollout to finish: 0 of 3 updated replicas are available...");
            assertThat(deployment.seen()).filteredOn(s -> s.pod().equals(first)).extracting(s -> s.ready())
                    .doesNotContain("True");
            List<DeploymentSimulator.PodState> during = deployment.seen().subList(before, deployment.seen().size());
            assertThat(during).filteredOn(s -> old.contains(s.pod()))
                    .as("no old pod's deletion cost dropped during the rollout").allMatch(s -> s.deletionCost().isEmpty());
            assertThat(resolver.pin().workers()).hasSize(REPLICAS).allMatch(w -> w.version().equals("1.4.0"));

            // What kubectl shows the operator (docs/kubernetes.md prints the same).
            assertThat(KubectlView.readinessGates(cluster.pod(first))).isEqualTo(String.join("\n",
                    "Readiness Gates:",
                    "  Type                      Status",
                    "  rollcall.dev/compatible   False ",
                    "Conditions:",
                    "  Type                      Status",
                    "  ContainersReady           True ",
                    "  Ready                     False ",
                    "  rollcall.dev/compatible   False "));
            assertThat(KubectlView.gateColumn(cluster.pod(first))).isEqualTo("0/1");
            assertThat(KubectlView.gateColumn(cluster.pod(old.get(0)))).isEqualTo("1/1");
        }
    }

    /**
     * Under {@code rollout} a new version's cohort is chosen only once it has enough workers, and with
     * {@code maxUnavailable: 0} it gets them only if its pods are let in first: they count toward the
     * next cohort ({@code True}, {@code CountsTowardCohort}), so the rollout cannot wait for itself (the
     * deadlock of datafusion-ballista#2071). Once the new cohort is chosen, the old cohort's pods are the
     * ones a scale-down takes first.
     */
    @Test
    void underRolloutTheNewCohortsPodsCountTowardItSoTheRolloutNeverWaitsForItselfAndTheOldCohortGoesFirst()
            throws Exception {
        RollcallConfig config = config(Map.of("rollcall.policy.type", "rollout", "rollcall.policy.rollout.range",
                "^1.0.0", "rollcall.policy.rollout.min-fraction", "0.5", "rollcall.kubernetes.pod-deletion-cost", "true"));
        try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
             KubernetesGate gate = KubernetesGate.start(resolver, config).orElseThrow()) {
            deployment.deploy("1.4.0", REPLICAS);
            List<String> old = deployment.live();

            deployment.rollout("1.5.0").get(WITHIN.toSeconds(), TimeUnit.SECONDS);

            List<DeploymentSimulator.PodState> seen = deployment.seen();
            String first = "workers-150-" + REPLICAS;
            assertThat(seen).as("the first new pod let in before its cohort is chosen")
                    .anyMatch(s -> s.pod().equals(first) && s.gate().equals("True")
                            && s.gateReason().equals("CountsTowardCohort") && s.ready().equals("True"));
            assertThat(seen).as("an old pod, once the new cohort is chosen, still in but first to go")
                    .anyMatch(s -> old.contains(s.pod()) && s.gate().equals("True")
                            && s.gateReason().equals("CountsTowardCohort") && s.deletionCost().equals(Optional.of("-100")));
            assertThat(deployment.deleted()).containsExactlyElementsOf(old);
            assertThat(deployment.live()).hasSize(REPLICAS).allMatch(pod -> pod.startsWith("workers-150-"));
            await().atMost(WITHIN).untilAsserted(() -> {
                assertThat(resolver.pin().workers()).hasSize(REPLICAS).allMatch(w -> w.version().equals("1.5.0"));
                for (String pod : deployment.live()) {
                    assertThat(cluster.gate(pod).orElseThrow().getReason()).isEqualTo("Compatible");
                    // The merge patch's null removes the annotation; the mock keeps the key with no value.
                    assertThat(cluster.pod(pod).getMetadata().getAnnotations())
                            .extractingByKey("controller.kubernetes.io/pod-deletion-cost").isNull();
                }
            });
        }
    }

    private static List<String> concat(List<String> list, String one) {
        List<String> all = new java.util.ArrayList<>(list);
        all.add(one);
        return all;
    }

    private static WorkerStatus.State state(FleetSnapshot snapshot, String pod) {
        return snapshot.statuses().stream().filter(s -> pod.equals(s.endpoint().labels().get("pod")))
                .map(WorkerStatus::state).findFirst().orElse(null);
    }

    private RollcallConfig config(Map<String, String> policy) {
        return cluster.gateConfig(policy);
    }
}
