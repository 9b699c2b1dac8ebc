package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.SnapshotListener;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.RolloutPolicy;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.local.WorkerFleet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A rolling upgrade of real loopback workers, followed by a real resolver with the {@code rollout}
 * policy: every snapshot the resolver publishes uses one version, and the cohort switches once.
 */
class RolloutUpgradeTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String OLD = "2.0.0";
    private static final String NEW = "2.1.0";
    private static final int SIZE = 10;

    @Test
    void upgradeOfTenWorkersSwitchesCohortOnceWithoutMixingVersionsOrFlapping() throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        // The fraction alone: 2.1.0 takes over at 5 of 10, and 2.0.0 is kept while it has a worker.
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minFraction(0.5).build();
        List<FleetSnapshot> seen = new CopyOnWriteArrayList<>();
        try (WorkerFleet fleet = WorkerFleet.start(Collections.nCopies(SIZE, OLD).toArray(String[]::new));
             WorkerResolver resolver = WorkerResolver.builder().name("rollout").discovery(discovery).policy(policy)
                     .backoff(Duration.ofMillis(20), Duration.ofMillis(200)).build();
             SnapshotListener.Registration listening = resolver.addListener(seen::add)) {
            discovery.push(fleet.endpoints());
            List<String> cohortAfterStep = new ArrayList<>();
            cohortAfterStep.add(cohort(settle(resolver, fleet, 0)));

            for (int step = 1; step <= SIZE; step++) {
                fleet.worker(step - 1).restart(NEW);
                FleetSnapshot settled = settle(resolver, fleet, step);
                cohortAfterStep.add(cohort(settled));

                if (step == 4) {
                    // A worker of the current cohort goes down for a while and comes back: 2.0.0 has
                    // 5 of 9 meanwhile, which still keeps it.
                    FleetWorker old = fleet.worker(SIZE - 1);
                    old.stop();
                    FleetSnapshot down = resolver.await(s -> stateOf(s, old) == State.UNREACHABLE, WAIT);
                    assertThat(cohort(down)).isEqualTo(OLD);
                    old.restart(OLD);
                    assertThat(cohort(settle(resolver, fleet, step))).isEqualTo(OLD);
                }
                if (step == 5) {
                    // Right after the switch a worker of the new cohort restarts in place. While it is
                    // away 2.1.0 has 4 of 9 workers, short of half, and 2.0.0 has 5: a choice without
                    // memory would go back to 2.0.0.
                    assertThat(settled.selection().explanation()).isEqualTo(
                            "2.1.0 has 5 of 10 allowed workers (needs 50%); switched from 2.0.0");
                    assertThat(settled.status(fleet.worker(SIZE - 1).endpoint().url()).orElseThrow().reason())
                            .isEqualTo("version '2.0.0' is not the chosen cohort 2.1.0 (rollout)");
                    FleetWorker restarting = fleet.worker(0);
                    long before = settled.number();
                    restarting.restart(NEW);
                    FleetSnapshot back = settle(resolver, fleet, step);
                    assertThat(cohort(back)).isEqualTo(NEW);
                    awaitDelivered(seen, back);
                    List<FleetSnapshot> meanwhile = seen.stream()
                            .filter(s -> s.number() > before && s.number() < back.number()).toList();
                    assertThat(meanwhile).as("snapshots while worker 0 restarted")
                            .anySatisfy(s -> assertThat(stateOf(s, restarting)).isNotEqualTo(State.COMPATIBLE))
                            .allSatisfy(s -> assertThat(cohort(s)).isEqualTo(NEW));
                }
            }
            FleetSnapshot last = resolver.pin();
            awaitDelivered(seen, last);

            assertThat(cohortAfterStep).containsExactly(OLD, OLD, OLD, OLD, OLD, NEW, NEW, NEW, NEW, NEW, NEW);
            assertThat(last.workers()).hasSize(SIZE);
            assertThat(last.policy()).isEqualTo("rollout ^2 (min-fraction 0.5)");
        }

        List<String> cohorts = new ArrayList<>();
        boolean chosen = false;
        for (FleetSnapshot s : seen) {
            List<String> versions = s.workers().stream().map(WorkerInfo::version).distinct().toList();
            assertThat(versions).as("versions used together in snapshot %d", s.number()).hasSizeLessThanOrEqualTo(1);
            assertThat(s.selection().cohort()).as("cohort of snapshot %d", s.number())
                    .isEqualTo(versions.stream().findFirst());
            chosen |= !versions.isEmpty();
            if (chosen) {
                assertThat(versions).as("snapshot %d, after the first choice", s.number()).isNotEmpty();
                if (cohorts.isEmpty() || !cohorts.get(cohorts.size() - 1).equals(versions.get(0))) {
                    cohorts.add(versions.get(0));
                }
            }
        }
        assertThat(cohorts).as("cohorts in the order they were used").containsExactly(OLD, NEW);
        assertThat(seen).extracting(FleetSnapshot::number).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void preferFallsBackWhenItsFirstRangeLosesItsWorkersAndReturnsWhenTheyAreBack() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("2.0.0", "2.0.1", "2.1.0");
             WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                     "rollcall.discovery.type", "static",
                     "rollcall.discovery.static.endpoints", fleet.endpointList(),
                     "rollcall.policy.type", "prefer",
                     "rollcall.policy.prefer.ranges", "~2.1, ~2.0",
                     "rollcall.probe.backoff.initial", "20ms",
                     "rollcall.probe.backoff.max", "200ms")))) {
            FleetWorker preferred = fleet.worker(2);
            FleetSnapshot first = resolver.await(s -> s.counts().candidates() == 3 && s.counts().pending() == 0
                    && versions(s).equals(List.of(NEW)), WAIT);
            assertThat(first.policy()).isEqualTo("prefer ~2.1, ~2.0");
            assertThat(first.selection().explanation()).isEqualTo("~2.1 has 1 worker");
            assertThat(first.status(fleet.worker(0).endpoint().url()).orElseThrow().reason())
                    .isEqualTo("prefer chose ~2.1 (1 worker); version '2.0.0' matches only ~2.0");

            preferred.stop();
            FleetSnapshot fallback = resolver.await(s -> versions(s).equals(List.of("2.0.0", "2.0.1")), WAIT);
            assertThat(fallback.selection().explanation()).isEqualTo("~2.0 has 2 workers; ~2.1 has none");

            preferred.restart("2.1.1");
            assertThat(versions(resolver.await(s -> versions(s).equals(List.of("2.1.1")), WAIT)))
                    .containsExactly("2.1.1");
        }
    }

    /**
     * Waits until the resolver has seen every worker as it runs now: all answered (none pending or
     * unreachable), each with its current instance id, and {@code upgraded} of them on the new version.
     */
    private static FleetSnapshot settle(WorkerResolver resolver, WorkerFleet fleet, int upgraded) throws Exception {
        Map<String, Integer> expected = new TreeMap<>();
        if (upgraded < SIZE) {
            expected.put(OLD, SIZE - upgraded);
        }
        if (upgraded > 0) {
            expected.put(NEW, upgraded);
        }
        return resolver.await(s -> s.counts().candidates() == SIZE && s.counts().pending() == 0
                && s.counts().unreachable() == 0 && s.versionHistogram().equals(expected)
                && fleet.workers().stream().allMatch(w -> s.status(w.endpoint().url()).flatMap(WorkerStatus::info)
                        .map(WorkerInfo::instanceId).filter(w.instanceId()::equals).isPresent()), WAIT);
    }

    private static void awaitDelivered(List<FleetSnapshot> seen, FleetSnapshot snapshot) {
        await().atMost(WAIT).until(() -> seen.stream().anyMatch(s -> s.number() == snapshot.number()));
    }

    private static State stateOf(FleetSnapshot snapshot, FleetWorker worker) {
        return snapshot.status(worker.endpoint().url()).map(WorkerStatus::state).orElse(null);
    }

    /** The cohort the policy chose for this snapshot; "(none)" when it chose none. */
    private static String cohort(FleetSnapshot snapshot) {
        Optional<String> cohort = snapshot.selection().cohort();
        return cohort.orElse("(none)");
    }

    private static List<String> versions(FleetSnapshot snapshot) {
        return snapshot.workers().stream().map(WorkerInfo::version).sorted().toList();
    }
}
