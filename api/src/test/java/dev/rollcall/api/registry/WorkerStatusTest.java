package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.Optional;
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
}
