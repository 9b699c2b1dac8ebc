package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.WorkerStatus;
import java.util.OptionalInt;

/**
 * What the snapshot code reads of a tracked worker to show it, and the {@link ShownState} it keeps
 * on it. Implemented by the tracker's per-worker state; on the serial context.
 */
public interface ShownWorker {

    String url();

    WorkerEndpoint endpoint();

    /** The last answer; null until the first and after a failure. */
    WorkerInfo info();

    /** Whether it answered its last probe and nothing has cast doubt on it since. */
    boolean answered();

    /** Whether readers may be using it: it answered and serves. */
    boolean inUse();

    /** Whether it takes new work (meaningful once it answered). */
    ServingState serving();

    /**
     * How many coordinators still hold it, when its own answer says it drains and carried the count;
     * empty otherwise. Shown only on a {@code DRAINING} status.
     */
    default OptionalInt holders() {
        return OptionalInt.empty();
    }

    /** Why it is out ({@code ""} once it answered). */
    String reason();

    /** What a snapshot shows of it before the policy has its say. */
    WorkerStatus.State shownBeforePolicy();

    /** The snapshot code's state on it. */
    ShownState shownState();

    /**
     * What snapshots show of it while it is held out of them whatever it answers (damped for
     * flapping), or {@code null} while it is not: then it is {@code REJECTED} with {@code reason},
     * showing {@code info}, and no policy sees it.
     */
    default Held heldOut() {
        return null;
    }

    /** A worker held out of snapshots: the answer shown (fixed while held) and why. */
    record Held(WorkerInfo info, String reason) {
    }
}
