package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class WorkerStatusTest {

    private static final WorkerEndpoint E = WorkerEndpoint.parse("grpcs://w:443");

    @Test
    void toStringShowsUrlStateAndReasonWhenAny() {
        assertThat(new WorkerStatus(E, WorkerStatus.State.COMPATIBLE, "", Optional.of(WorkerInfo.of(E, "1"))))
                .hasToString("grpcs://w:443 COMPATIBLE");
        assertThat(new WorkerStatus(E, WorkerStatus.State.REJECTED, "version 2 is not 1", Optional.empty()))
                .hasToString("grpcs://w:443 REJECTED (version 2 is not 1)");
    }

    @Test
    void rejectsNulls() {
        assertThatThrownBy(() -> new WorkerStatus(null, WorkerStatus.State.PENDING, "", Optional.empty()))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new WorkerStatus(E, null, "", Optional.empty()))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new WorkerStatus(E, WorkerStatus.State.PENDING, null, Optional.empty()))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new WorkerStatus(E, WorkerStatus.State.PENDING, "", null))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void theConstructorFromBeforeHoldersMakesAStatusWithoutACount() {
        WorkerStatus old = new WorkerStatus(E, WorkerStatus.State.DRAINING, "draining", Optional.empty());
        assertThat(old.holders()).isEmpty();
        assertThat(old).isEqualTo(new WorkerStatus(E, WorkerStatus.State.DRAINING, "draining", Optional.empty(),
                OptionalInt.empty()));
    }

    @Test
    void aDrainingWorkerCarriesItsHoldersAndZeroIsACount() {
        WorkerStatus held = new WorkerStatus(E, WorkerStatus.State.DRAINING, "", Optional.empty(), OptionalInt.of(2));
        WorkerStatus free = new WorkerStatus(E, WorkerStatus.State.DRAINING, "", Optional.empty(), OptionalInt.of(0));
        assertThat(held.holders()).hasValue(2);
        assertThat(free.holders()).hasValue(0);
        assertThat(free).isNotEqualTo(new WorkerStatus(E, WorkerStatus.State.DRAINING, "", Optional.empty()))
                .isNotEqualTo(held);
    }

    @Test
    void rejectsHoldersForAWorkerThatIsNotDrainingOrBelowZero() {
        assertThatThrownBy(() -> new WorkerStatus(E, WorkerStatus.State.COMPATIBLE, "", Optional.empty(),
                OptionalInt.of(0))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holders 0 for a worker COMPATIBLE").hasMessageContaining("grpcs://w:443");
        assertThatThrownBy(() -> new WorkerStatus(E, WorkerStatus.State.DRAINING, "", Optional.empty(),
                OptionalInt.of(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holders -1");
        assertThatThrownBy(() -> new WorkerStatus(E, WorkerStatus.State.DRAINING, "", Optional.empty(), null))
                .isInstanceOf(NullPointerException.class);
    }
}
