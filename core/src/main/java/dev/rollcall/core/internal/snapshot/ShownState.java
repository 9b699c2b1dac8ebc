package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.WorkerStatus;
import java.util.List;

/**
 * What the snapshot code keeps on one worker between builds, as Caffeine's {@code Node} keeps an
 * entry's state: the status the last snapshot showed, the policy's remembered verdict, where the
 * worker is in {@link ShownFleet} and under which version it is counted, and whether it noted a
 * change since the last build. Only the snapshot code reads or writes these fields; the worker's
 * own code only calls {@link #noteChange()}.
 *
 * <p>Confined to the resolver's serial context.
 */
public final class ShownState {

    private final ShownWorker owner;
    /**
     * Where it notes that it changed: the list of workers the next build reads ({@code null}: nowhere,
     * before it joins and after it left). See {@link Changes}.
     */
    List<ShownWorker> changes;
    /** Whether it is in {@link #changes} (until the next build reads it). */
    boolean changed;
    /** As the last snapshot showed it; reused while nothing changed (see {@link SnapshotBuilder}). */
    WorkerStatus status;
    /** The answer {@link #status} was made with: compared without opening the status's {@code Optional}. */
    WorkerInfo statusInfo;
    /**
     * The policy's verdict on {@link #checkedInfo} (an answer of this worker): {@code ""} when it
     * accepted it, else its reason; the snapshot builder's memo.
     */
    String verdict;
    WorkerInfo checkedInfo;
    /** The version {@link ShownFleet} counts it under ({@code null}: none). */
    String countedVersion;
    /** Where {@link ShownFleet} last found it (a hint: checked before use). */
    int at;
    /** Its rendezvous weight on the coordinator id of {@link #weighedBy} ({@link Subset}); null: not yet. */
    long subsetWeight;
    Subset weighedBy;
    /** Whether it may hold a kept channel, as {@link Subset#rank} last found. */
    boolean keptEligible;

    public ShownState(ShownWorker owner) {
        this.owner = owner;
    }

    /**
     * What a snapshot shows of the worker may have changed: the next build reads it. Every method of
     * the worker that changes what a snapshot shows calls this, so that a build reads the workers
     * that changed, not all of them.
     */
    public void noteChange() {
        if (!changed && changes != null) {
            changed = true;
            changes.add(owner);
        }
    }
}
