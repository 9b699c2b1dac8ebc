package dev.rollcall.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.VersionPolicy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DefaultSelectionTest {

    private final WorkerInfo old = Workers.reporting("1.3.0");
    private final WorkerInfo current = Workers.reporting("1.4.0");
    private final WorkerInfo banana = Workers.reporting("banana");
    private final WorkerInfo newer = Workers.reporting("1.5.2");
    private final WorkerInfo silent = Workers.reporting("");
    private final WorkerInfo next = Workers.reporting("2.0.0");
    private final List<WorkerInfo> probed = List.of(old, current, banana, newer, silent, next);

    @Test
    void semverSelectionKeepsOrderAndPlacesEveryWorkerOnce() {
        Selection selection = SemverRangePolicy.of("^1.4").select(probed);

        assertThat(selection.accepted()).containsExactly(current, newer);
        assertThat(selection.rejected()).extracting(Selection.Rejection::worker)
                .containsExactly(old, banana, silent, next);
        assertThat(selection.rejected()).extracting(Selection.Rejection::reason).containsExactly(
                "version '1.3.0' is outside ^1.4",
                "version 'banana' is not semantic versioning",
                "no version (the worker never set one) is outside ^1.4",
                "version '2.0.0' is outside ^1.4");
        assertEveryWorkerInExactlyOneList(selection);
    }

    @Test
    void exactSelectionKeepsOrderAndPlacesEveryWorkerOnce() {
        Selection selection = ExactVersionPolicy.of("1.5.2", "1.3.0").select(probed);

        assertThat(selection.accepted()).containsExactly(old, newer);
        assertThat(selection.rejected()).extracting(Selection.Rejection::worker)
                .containsExactly(current, banana, silent, next);
        assertEveryWorkerInExactlyOneList(selection);
    }

    @Test
    void selectionOfNoWorkersIsEmpty() {
        for (VersionPolicy policy : List.of(SemverRangePolicy.of("*"), ExactVersionPolicy.of("1.4.0"))) {
            Selection selection = policy.select(List.of());

            assertThat(selection.accepted()).isEmpty();
            assertThat(selection.rejected()).isEmpty();
        }
    }

    private void assertEveryWorkerInExactlyOneList(Selection selection) {
        List<WorkerInfo> placed = new ArrayList<>(selection.accepted());
        selection.rejected().forEach(rejection -> placed.add(rejection.worker()));
        assertThat(placed).containsExactlyInAnyOrderElementsOf(probed);
    }
}
