package dev.rollcall.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Selection;
import java.util.List;
import org.junit.jupiter.api.Test;

class PreferPolicyTest {

    @Test
    void usesTheFirstRangeThatHasWorkers() {
        PreferPolicy policy = PreferPolicy.of("^2.1", "^2.0");
        SteppedFleet fleet = new SteppedFleet(4, "2.0.3").set(3, "2.1.0");

        Selection selection = policy.select(fleet.workers());

        assertThat(versions(selection.accepted())).containsExactly("2.1.0");
        assertThat(selection.explanation()).isEqualTo("^2.1 has 1 worker");
        assertThat(selection.cohort()).isEmpty();
        assertThat(selection.rejected()).extracting(Selection.Rejection::reason)
                .containsOnly("prefer chose ^2.1 (1 worker); version '2.0.3' matches only ^2.0")
                .hasSize(3);
    }

    @Test
    void fallsBackWhenThePreferredRangeLosesItsWorkersAndReturnsWhenTheyComeBack() {
        PreferPolicy policy = PreferPolicy.of("^2.1", "^2.0");
        SteppedFleet fleet = new SteppedFleet(5, "2.0.3").set(0, "2.1.0").set(1, "2.1.1");

        assertThat(versions(policy.select(fleet.workers()).accepted())).containsExactly("2.1.0", "2.1.1");

        fleet.down(0);
        assertThat(versions(policy.select(fleet.workers()).accepted())).containsExactly("2.1.1");

        fleet.down(1);
        Selection fallback = policy.select(fleet.workers());
        assertThat(versions(fallback.accepted())).containsExactly("2.0.3", "2.0.3", "2.0.3");
        assertThat(fallback.explanation()).isEqualTo("^2.0 has 3 workers; ^2.1 has none");

        fleet.set(1, "2.1.1");
        Selection forward = policy.select(fleet.workers());
        assertThat(versions(forward.accepted())).containsExactly("2.1.1");
        assertThat(forward.explanation()).isEqualTo("^2.1 has 1 worker");

        fleet.down(1).down(2).down(3).down(4);
        Selection none = policy.select(fleet.workers());
        assertThat(none.accepted()).isEmpty();
        assertThat(none.explanation()).isEqualTo("no worker matches ^2.1, ^2.0");
    }

    @Test
    void workerInBothRangesIsUsedWhicheverIsChosen() {
        // ^2.0 means >=2.0.0 <3.0.0, so it includes 2.1.x.
        PreferPolicy policy = PreferPolicy.of("^2.1", "^2.0");
        SteppedFleet fleet = new SteppedFleet(3, "2.0.3").set(0, "2.1.0");

        assertThat(versions(policy.select(fleet.workers()).accepted())).containsExactly("2.1.0");
        assertThat(PreferPolicy.builder().ranges("^2.1", "^2.0").minWorkers(2).build().select(fleet.workers())
                .accepted()).extracting(WorkerInfo::version).containsExactly("2.1.0", "2.0.3", "2.0.3");
    }

    @Test
    void minWorkersSkipsARangeWithTooFewWorkers() {
        PreferPolicy policy = PreferPolicy.builder().ranges("~2.1", "~2.0").minWorkers(2).build();
        SteppedFleet fleet = new SteppedFleet(4, "2.0.0").set(0, "2.1.0");

        Selection selection = policy.select(fleet.workers());

        assertThat(versions(selection.accepted())).containsExactly("2.0.0", "2.0.0", "2.0.0");
        assertThat(selection.explanation()).isEqualTo("~2.0 has 3 workers (needs 2); ~2.1 has 1, needs 2");
        assertThat(selection.rejected()).extracting(Selection.Rejection::reason)
                .containsExactly("prefer chose ~2.0 (3 workers); version '2.1.0' matches only ~2.1");

        fleet.set(1, "2.1.3");
        assertThat(versions(policy.select(fleet.workers()).accepted())).containsExactly("2.1.0", "2.1.3");

        fleet.down(2).down(3).set(1, "2.0.0");
        Selection none = policy.select(fleet.workers());
        assertThat(none.accepted()).isEmpty();
        assertThat(none.explanation()).isEqualTo("no range has 2 workers: ~2.1 has 1, ~2.0 has 1");
        assertThat(none.rejected()).extracting(Selection.Rejection::reason)
                .containsOnly("prefer: no range has 2 workers: ~2.1 has 1, ~2.0 has 1");
    }

    @Test
    void workerOutsideEveryRangeIsRejectedWithItsOwnReason() {
        PreferPolicy policy = PreferPolicy.of("^2.1", "^2.0");
        List<WorkerInfo> workers = List.of(Workers.reporting("2.1.0"), Workers.reporting("3.0.0"),
                Workers.reporting("banana"), Workers.reporting(""), Workers.reporting("2.2.0-rc.1"));

        Selection selection = policy.select(workers);

        assertThat(versions(selection.accepted())).containsExactly("2.1.0");
        assertThat(selection.rejected()).extracting(Selection.Rejection::reason).containsExactly(
                "version '3.0.0' matches none of ^2.1, ^2.0",
                "version 'banana' is not semantic versioning",
                "no version (the worker never set one) matches none of ^2.1, ^2.0",
                "version '2.2.0-rc.1' matches none of ^2.1, ^2.0 (it is a pre-release, and pre-releases are not included)");
        assertThat(policy.check(Workers.reporting("3.0.0")).reason()).isEqualTo("version '3.0.0' matches none of ^2.1, ^2.0");
        assertThat(policy.check(Workers.reporting("2.0.1")).accepted()).isTrue();
    }

    @Test
    void includesPreReleasesInEveryRangeWhenAsked() {
        PreferPolicy policy = PreferPolicy.builder().ranges("^2.1", "^2.0").includePrerelease(true).build();

        Selection selection = policy.select(List.of(Workers.reporting("2.2.0-rc.1"), Workers.reporting("2.0.0")));

        assertThat(versions(selection.accepted())).containsExactly("2.2.0-rc.1");
        assertThat(policy.description()).isEqualTo("prefer ^2.1, ^2.0 (pre-releases included)");
    }

    @Test
    void singleRangeRejectsLikeSemver() {
        PreferPolicy policy = PreferPolicy.of("^2.1");

        assertThat(policy.select(List.of(Workers.reporting("2.0.0"))).rejected())
                .extracting(Selection.Rejection::reason).containsExactly("version '2.0.0' is outside ^2.1");
    }

    @Test
    void describesItsRanges() {
        assertThat(PreferPolicy.of("^2.1", ">=2.0.0   <2.1").description()).isEqualTo("prefer ^2.1, >=2.0.0 <2.1");
        assertThat(PreferPolicy.builder().ranges(List.of("^2.1", "^2.0")).minWorkers(3).includePrerelease(true)
                .build().toString()).isEqualTo("prefer ^2.1, ^2.0 (min-workers 3, pre-releases included)");
        assertThat(PreferPolicy.of("^2.1", "^2.0").ranges()).containsExactly("^2.1", "^2.0");
    }

    @Test
    void refusesBadArgumentsNamingThem() {
        assertThatThrownBy(PreferPolicy::of).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a prefer policy needs at least one range");
        assertThatThrownBy(() -> PreferPolicy.of("^2.1", "^^2")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid semver range '^^2': '^^2' is not a version or comparator");
        assertThatThrownBy(() -> PreferPolicy.builder().minWorkers(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("minWorkers must be at least 1, not 0");
        assertThatThrownBy(() -> PreferPolicy.builder().build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PreferPolicy.of("^2.1", null)).isInstanceOf(NullPointerException.class);
    }

    private static List<String> versions(List<WorkerInfo> workers) {
        return workers.stream().map(WorkerInfo::version).toList();
    }
}
