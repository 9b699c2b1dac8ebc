package dev.rollcall.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Selection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RolloutPolicyTest {

    /** Thresholds, and the upgrade step (workers on 2.1.0 out of 10) at which the cohort must switch. */
    static Stream<Arguments> thresholds() {
        return Stream.of(
                arguments("min-workers 5", (UnaryOperator<RolloutPolicy.Builder>) b -> b.minWorkers(5), 5),
                arguments("min-fraction 0.6", (UnaryOperator<RolloutPolicy.Builder>) b -> b.minFraction(0.6), 6),
                arguments("min-fraction 0.5", (UnaryOperator<RolloutPolicy.Builder>) b -> b.minFraction(0.5), 5),
                // Either threshold suffices: the lower one decides when a cohort qualifies.
                arguments("min-workers 5, min-fraction 0.6",
                        (UnaryOperator<RolloutPolicy.Builder>) b -> b.minWorkers(5).minFraction(0.6), 5),
                arguments("min-workers 3, min-fraction 0.6",
                        (UnaryOperator<RolloutPolicy.Builder>) b -> b.minWorkers(3).minFraction(0.6), 3));
    }

    /**
     * Ten workers move from 2.0.0 to 2.1.0 one at a time; each move is a restart (the worker is
     * missing from one selection, then back with the new version). One worker of the current cohort
     * also restarts in place before the switch, and one after it.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("thresholds")
    void upgradeOfTenWorkersSwitchesCohortExactlyOnceAndNeverMixesVersions(
            String thresholds, UnaryOperator<RolloutPolicy.Builder> configure, int switchStep) {
        RolloutPolicy policy = configure.apply(RolloutPolicy.builder().range("^2")).build();
        assertThat(policy.description()).isEqualTo("rollout ^2 (" + thresholds + ")");
        SteppedFleet fleet = new SteppedFleet(10, "2.0.0");
        Recorder calls = new Recorder(policy, fleet);

        calls.select("all on 2.0.0");
        for (int step = 1; step <= 10; step++) {
            int upgraded = step - 1;
            fleet.down(upgraded);
            calls.select("step " + step + ": worker " + upgraded + " stops");
            fleet.set(upgraded, "2.1.0");
            calls.select("step " + step + ": worker " + upgraded + " runs 2.1.0");
            String expected = step >= switchStep ? "2.1.0" : "2.0.0";
            assertThat(calls.lastCohort()).as("cohort after step %d", step).contains(expected);
            assertThat(calls.lastAccepted()).as("step %d uses every worker of the cohort", step)
                    .hasSize(expected.equals("2.1.0") ? step : 10 - step);

            if (step == switchStep - 2 || step == switchStep + 2) {
                int restarting = step == switchStep - 2 ? 9 : 0; // one of the current cohort's workers
                String version = step == switchStep - 2 ? "2.0.0" : "2.1.0";
                fleet.down(restarting);
                calls.select("step " + step + ": worker " + restarting + " restarts");
                assertThat(calls.lastCohort()).as("while worker %d restarts", restarting).contains(expected);
                fleet.set(restarting, version);
                calls.select("step " + step + ": worker " + restarting + " is back on " + version);
                assertThat(calls.lastCohort()).as("after worker %d restarted", restarting).contains(expected);
            }
        }

        assertThat(calls.cohortChanges()).containsExactly("2.0.0", "2.1.0");
        assertThat(calls.switches()).containsExactly("step " + switchStep + ": worker " + (switchStep - 1)
                + " runs 2.1.0");
        assertThat(calls.explanationAt(calls.switches().get(0))).endsWith("; switched from 2.0.0");
        assertThat(calls.all()).allSatisfy(c -> assertThat(c.selection().cohort()).isPresent());
    }

    @Test
    void explainsEachChoiceWithTheCounts() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minWorkers(5).build();
        SteppedFleet fleet = new SteppedFleet(10, "2.0.0");

        assertThat(policy.select(fleet.workers()).explanation())
                .isEqualTo("2.0.0 has 10 of 10 allowed workers (needs 5)");
        fleet.set(0, "2.1.0").set(1, "2.1.0").set(2, "2.1.0");
        Selection kept = policy.select(fleet.workers());
        assertThat(kept.explanation()).isEqualTo("kept 2.0.0: 7 of 10 allowed workers; 2.1.0 has 3 of 10, needs 5");
        assertThat(kept.rejected()).extracting(Selection.Rejection::reason)
                .containsOnly("version '2.1.0' is not the chosen cohort 2.0.0 (rollout)");
        fleet.set(3, "2.1.0").set(4, "2.1.0").set(5, "2.1.0");
        Selection switched = policy.select(fleet.workers());
        assertThat(switched.cohort()).contains("2.1.0");
        assertThat(switched.explanation()).isEqualTo("2.1.0 has 6 of 10 allowed workers (needs 5); switched from 2.0.0");
        assertThat(switched.rejected()).extracting(Selection.Rejection::reason)
                .containsOnly("version '2.0.0' is not the chosen cohort 2.1.0 (rollout)");
        assertThat(policy.select(fleet.workers()).explanation()).isEqualTo("kept 2.1.0: 6 of 10 allowed workers");
    }

    @Test
    void fallsBackWhenTheCurrentCohortDropsBelowMinWorkers() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minWorkers(5).build();
        SteppedFleet fleet = new SteppedFleet(10, "2.0.0");
        for (int i = 0; i < 5; i++) {
            fleet.set(i, "2.1.0");
        }
        policy.select(new SteppedFleet(10, "2.0.0").workers());
        assertThat(policy.select(fleet.workers()).cohort()).contains("2.1.0");

        // min-workers is the floor: with 4 the new cohort is left for the old one, which has 5.
        fleet.down(0);
        Selection fallback = policy.select(fleet.workers());

        assertThat(fallback.cohort()).contains("2.0.0");
        assertThat(versions(fallback.accepted())).containsOnly("2.0.0").hasSize(5);
        assertThat(fallback.explanation()).isEqualTo("2.0.0 has 5 of 9 allowed workers (needs 5);"
                + " fell back from 2.1.0, which has 4 of 9 (fewer than min-workers 5)");

        fleet.set(0, "2.1.0");
        Selection forward = policy.select(fleet.workers());
        assertThat(forward.cohort()).contains("2.1.0");
        assertThat(forward.explanation()).endsWith("; switched from 2.0.0");
    }

    @Test
    void fractionAloneKeepsTheNewCohortWhenOneOfItsWorkersRestartsRightAfterTheSwitch() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minFraction(0.5).build();
        SteppedFleet fleet = new SteppedFleet(10, "2.0.0");
        policy.select(fleet.workers());
        for (int i = 0; i < 5; i++) {
            fleet.set(i, "2.1.0");
        }
        assertThat(policy.select(fleet.workers()).cohort()).contains("2.1.0"); // 5 of 10 each: the newer

        // 2.1.0 has 4 of 9, short of 50%, while 2.0.0 has 5 of 9: a choice without memory would go back.
        fleet.down(2);
        Selection restarting = policy.select(fleet.workers());

        assertThat(restarting.cohort()).contains("2.1.0");
        assertThat(restarting.explanation()).isEqualTo("kept 2.1.0: 4 of 9 allowed workers (stays while it has at least 1)");
        assertThat(versions(restarting.accepted())).containsOnly("2.1.0").hasSize(4);
        fleet.set(2, "2.1.0");
        assertThat(policy.select(fleet.workers()).cohort()).contains("2.1.0");
    }

    @Test
    void fractionAloneFallsBackOnlyWhenTheCurrentCohortHasNoWorkerLeft() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minFraction(0.5).build();
        SteppedFleet fleet = new SteppedFleet(10, "2.1.0");
        policy.select(fleet.workers());
        for (int i = 0; i < 9; i++) {
            fleet.set(i, "2.0.0");
        }
        assertThat(policy.select(fleet.workers()).cohort()).contains("2.1.0");

        fleet.down(9);
        Selection fallback = policy.select(fleet.workers());

        assertThat(fallback.cohort()).contains("2.0.0");
        assertThat(fallback.explanation())
                .isEqualTo("2.0.0 has 9 of 9 allowed workers (needs 50%); fell back from 2.1.0, which has no workers left");
    }

    @Test
    void olderCohortNeverReplacesACurrentOneThatKeepsItsMinimum() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minWorkers(3).build();
        SteppedFleet fleet = new SteppedFleet(10, "2.1.0");
        policy.select(fleet.workers());
        for (int i = 0; i < 7; i++) {
            fleet.set(i, "2.0.0");
        }

        Selection selection = policy.select(fleet.workers());

        assertThat(selection.cohort()).contains("2.1.0");
        assertThat(versions(selection.accepted())).containsOnly("2.1.0").hasSize(3);
    }

    @Test
    void firstChoiceIsTheNewestQualifyingCohortNotTheLargest() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minWorkers(2).build();
        List<WorkerInfo> workers = fleetOf(Map.of("2.0.0", 5, "2.1.0", 2, "2.2.0", 1));

        Selection selection = policy.select(workers);

        assertThat(selection.cohort()).contains("2.1.0");
        assertThat(selection.explanation()).isEqualTo("2.1.0 has 2 of 8 allowed workers (needs 2)");
    }

    @Test
    void switchesForwardToTheNewestQualifyingCohortOverSeveralVersions() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minWorkers(3).build();
        policy.select(fleetOf(Map.of("2.0.0", 9)));

        Selection selection = policy.select(fleetOf(Map.of("2.0.0", 3, "2.1.0", 3, "2.2.0", 3)));

        assertThat(selection.cohort()).contains("2.2.0");
        assertThat(selection.explanation()).isEqualTo("2.2.0 has 3 of 9 allowed workers (needs 3); switched from 2.0.0");
    }

    @Test
    void selectsNothingWhenNoCohortQualifiesAndSaysWhy() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minWorkers(3).minFraction(0.6).build();
        List<WorkerInfo> workers = new ArrayList<>(fleetOf(Map.of("2.0.0", 2, "2.1.0", 2, "2.2.0", 1)));
        WorkerInfo outside = Workers.reporting("3.0.0");
        workers.add(outside);

        Selection selection = policy.select(workers);

        assertThat(selection.accepted()).isEmpty();
        assertThat(selection.cohort()).isEmpty();
        String why = "no cohort of ^2 qualifies: 2.0.0 has 2 of 5, 2.1.0 has 2 of 5, 2.2.0 has 1 of 5 (needs 3 or 60%)";
        assertThat(selection.explanation()).isEqualTo(why);
        assertThat(selection.rejected()).hasSize(6).allSatisfy(r -> assertThat(r.reason())
                .isEqualTo(r.worker() == outside ? "version '3.0.0' is outside ^2" : why));
    }

    @Test
    void forgetsTheCurrentCohortWhenNoneQualifies() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minWorkers(3).build();
        policy.select(fleetOf(Map.of("2.1.0", 3)));

        Selection none = policy.select(fleetOf(Map.of("2.1.0", 2, "2.0.0", 2)));
        assertThat(none.cohort()).isEmpty();
        assertThat(none.explanation()).isEqualTo("no cohort of ^2 qualifies: 2.0.0 has 2 of 4, 2.1.0 has 2 of 4"
                + " (needs 3); dropped 2.1.0");

        // Chosen afresh: the newest qualifying cohort, with nothing to switch from.
        Selection again = policy.select(fleetOf(Map.of("2.1.0", 2, "2.0.0", 3)));
        assertThat(again.cohort()).contains("2.0.0");
        assertThat(again.explanation()).isEqualTo("2.0.0 has 3 of 5 allowed workers (needs 3)");
    }

    @Test
    void selectsNothingWhenNoWorkerIsInTheRange() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minFraction(0.5).build();

        Selection selection = policy.select(fleetOf(Map.of("1.9.0", 2)));
        Selection empty = policy.select(List.of());

        assertThat(selection.accepted()).isEmpty();
        assertThat(selection.explanation()).isEqualTo("no worker is in ^2");
        assertThat(selection.rejected()).extracting(Selection.Rejection::reason)
                .containsOnly("version '1.9.0' is outside ^2");
        assertThat(empty.accepted()).isEmpty();
        assertThat(empty.rejected()).isEmpty();
        assertThat(empty.cohort()).isEmpty();
    }

    @Test
    void workersOutsideTheRangeAreRejectedAndDoNotCountTowardsTheFraction() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minFraction(0.5).build();
        WorkerInfo banana = Workers.reporting("banana");
        WorkerInfo silent = Workers.reporting("");
        WorkerInfo preRelease = Workers.reporting("2.2.0-rc.1");
        List<WorkerInfo> workers = new ArrayList<>(fleetOf(Map.of("2.0.0", 3, "2.1.0", 2)));
        workers.addAll(List.of(Workers.reporting("1.0.0"), Workers.reporting("1.0.0"), Workers.reporting("1.0.0"),
                banana, silent, preRelease));

        // 3 of the 5 workers in ^2 is 50% or more; the 6 others would have made it 3 of 11.
        Selection selection = policy.select(workers);

        assertThat(selection.cohort()).contains("2.0.0");
        assertThat(selection.explanation()).isEqualTo("2.0.0 has 3 of 5 allowed workers (needs 50%)");
        assertThat(versions(selection.accepted())).containsExactly("2.0.0", "2.0.0", "2.0.0");
        assertThat(selection.rejected()).extracting(Selection.Rejection::reason).containsExactly(
                "version '2.1.0' is not the chosen cohort 2.0.0 (rollout)",
                "version '2.1.0' is not the chosen cohort 2.0.0 (rollout)",
                "version '1.0.0' is outside ^2",
                "version '1.0.0' is outside ^2",
                "version '1.0.0' is outside ^2",
                "version 'banana' is not semantic versioning",
                "no version (the worker never set one) is outside ^2",
                "version '2.2.0-rc.1' is outside ^2 (it is a pre-release, and pre-releases are not included)");
    }

    @Test
    void buildMetadataAndAVPrefixDoNotSplitACohort() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minWorkers(3).build();
        List<WorkerInfo> workers = List.of(Workers.reporting("2.1.0"), Workers.reporting("v2.1.0"),
                Workers.reporting("2.1.0+arm64"), Workers.reporting("2.0.0"));

        Selection selection = policy.select(workers);

        assertThat(selection.cohort()).contains("2.1.0");
        assertThat(versions(selection.accepted())).containsExactly("2.1.0", "v2.1.0", "2.1.0+arm64");
    }

    @Test
    void preReleaseIsACohortOfItsOwnWhenPreReleasesAreIncluded() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minWorkers(2).includePrerelease(true).build();

        Selection selection = policy.select(fleetOf(Map.of("2.1.0-rc.1", 2, "2.1.0-rc.2", 1, "2.0.0", 3)));

        assertThat(policy.description()).isEqualTo("rollout ^2 (min-workers 2, pre-releases included)");
        assertThat(selection.cohort()).contains("2.1.0-rc.1");
        assertThat(versions(selection.accepted())).containsOnly("2.1.0-rc.1").hasSize(2);
    }

    @Test
    void fractionIsRoundedUpToAWholeWorker() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minFraction(0.34).build();
        policy.select(fleetOf(Map.of("2.0.0", 7)));

        // 0.34 of 10 is 3.4: 3 workers are not enough, 4 are.
        assertThat(policy.select(fleetOf(Map.of("2.0.0", 7, "2.1.0", 3))).cohort()).contains("2.0.0");
        assertThat(policy.select(fleetOf(Map.of("2.0.0", 6, "2.1.0", 4))).cohort()).contains("2.1.0");
        assertThat(policy.description()).isEqualTo("rollout ^2 (min-fraction 0.34)");
    }

    @Test
    void sameWorkersTwiceGiveTheSameChoice() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minWorkers(5).minFraction(0.3).build();
        List<WorkerInfo> before = fleetOf(Map.of("2.0.0", 6, "2.1.0", 4));
        policy.select(fleetOf(Map.of("2.0.0", 10)));
        List<WorkerInfo> after = fleetOf(Map.of("2.0.0", 5, "2.1.0", 5));

        for (List<WorkerInfo> workers : List.of(before, after)) {
            Selection first = policy.select(workers);
            Selection second = policy.select(workers);
            assertThat(second.cohort()).isEqualTo(first.cohort());
            assertThat(second.accepted()).isEqualTo(first.accepted());
        }
    }

    @Test
    void checkTellsWhetherAWorkerIsInTheRange() {
        RolloutPolicy policy = RolloutPolicy.builder().range("^2").minWorkers(1).build();

        assertThat(policy.check(Workers.reporting("2.4.0")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("3.0.0")).reason()).isEqualTo("version '3.0.0' is outside ^2");
    }

    private static List<String> versions(List<WorkerInfo> workers) {
        return workers.stream().map(WorkerInfo::version).toList();
    }

    /** Workers with these versions and counts, each on its own endpoint, ordered by version. */
    private static List<WorkerInfo> fleetOf(Map<String, Integer> counts) {
        List<WorkerInfo> workers = new ArrayList<>();
        counts.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
            for (int i = 0; i < e.getValue(); i++) {
                workers.add(Workers.reporting(e.getKey()));
            }
        });
        return workers;
    }

    /** Calls the policy, checks the invariants of every selection, and remembers each choice. */
    private static final class Recorder {

        record Call(String label, Selection selection) {
        }

        private final RolloutPolicy policy;
        private final SteppedFleet fleet;
        private final List<Call> calls = new ArrayList<>();

        Recorder(RolloutPolicy policy, SteppedFleet fleet) {
            this.policy = policy;
            this.fleet = fleet;
        }

        void select(String label) {
            List<WorkerInfo> workers = fleet.workers();
            Selection selection = policy.select(workers);
            List<WorkerInfo> placed = new ArrayList<>(selection.accepted());
            selection.rejected().forEach(r -> placed.add(r.worker()));
            assertThat(placed).as("%s: every worker in exactly one list", label)
                    .containsExactlyInAnyOrderElementsOf(workers);
            assertThat(versions(selection.accepted()).stream().distinct().toList())
                    .as("%s: versions used together", label)
                    .isEqualTo(selection.cohort().stream().toList());
            assertThat(selection.rejected()).as("%s: no worker of the chosen cohort is left out", label)
                    .noneMatch(r -> selection.cohort().equals(Optional.of(r.worker().version())));
            calls.add(new Call(label, selection));
        }

        Optional<String> lastCohort() {
            return calls.get(calls.size() - 1).selection().cohort();
        }

        List<WorkerInfo> lastAccepted() {
            return calls.get(calls.size() - 1).selection().accepted();
        }

        List<Call> all() {
            return calls;
        }

        /** The chosen cohorts, each listed once per run of calls that chose it. */
        List<String> cohortChanges() {
            List<String> changes = new ArrayList<>();
            for (Call call : calls) {
                String cohort = call.selection().cohort().orElse("(none)");
                if (changes.isEmpty() || !changes.get(changes.size() - 1).equals(cohort)) {
                    changes.add(cohort);
                }
            }
            return changes;
        }

        /** The labels of the calls whose cohort differs from the call before. */
        List<String> switches() {
            List<String> labels = new ArrayList<>();
            for (int i = 1; i < calls.size(); i++) {
                if (!calls.get(i).selection().cohort().equals(calls.get(i - 1).selection().cohort())) {
                    labels.add(calls.get(i).label());
                }
            }
            return labels;
        }

        String explanationAt(String label) {
            return calls.stream().filter(c -> c.label().equals(label)).map(c -> c.selection().explanation())
                    .collect(Collectors.joining());
        }
    }
}
