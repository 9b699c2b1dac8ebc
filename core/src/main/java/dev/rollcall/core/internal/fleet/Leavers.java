package dev.rollcall.core.internal.fleet;

import dev.rollcall.core.internal.probe.ProbeScheduler;
import dev.rollcall.core.internal.serial.SerialContext;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The workers that left discovery whose connections are still open, and when to close them. They
 * are closed in a task queued after the build their leaving asked for: readers learn that they are
 * gone, and the new workers' probes are on their way, before this thread spends time closing (a
 * churn closes many kept connections at once, and the newcomers would wait for each).
 *
 * <p>While probes are in flight or queued, only the leavers whose own probe is in flight (that
 * frees its place among the probes in flight) or awaited ({@code UserCalls.verify}: the caller
 * learns that the worker left) are closed at once; the others' kept connections stay open, unused,
 * until the probes are done or {@link #CLOSE_LEFT_WITHIN_NANOS} is up. Closing a connection costs
 * the worker at its other end, on the machine the newcomers' probes need: closed at once, a churn's
 * newcomers would be answered only after every leaver's close.
 *
 * <p>With exact drain, a leaver that a lease still holds keeps its connection (closing it would
 * release the worker) until {@link #closeFreed} finds it let go.
 *
 * <p>Confined to the resolver's serial context.
 */
final class Leavers {

    /**
     * A worker that left discovery has its kept connection closed once no probe is in flight or
     * queued, and at the latest this long after it left.
     */
    static final long CLOSE_LEFT_WITHIN_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final SerialContext context;
    private final ProbeScheduler<TrackedWorker> probes;
    private final List<TrackedWorker> leftOpen = new ArrayList<>();
    /** Leavers a lease holds (exact drain): open until {@link #closeFreed} finds them let go. */
    private final List<TrackedWorker> heldOpen = new ArrayList<>();
    private Predicate<TrackedWorker> held = t -> false;
    private boolean closeQueued;
    /** When the oldest of {@link #leftOpen} left (context ticker). */
    private long leftOpenSince;
    /** Closes what is left open once {@link #CLOSE_LEFT_WITHIN_NANOS} is up, however busy the probes are. */
    private SerialContext.Timer closeLeftLater;
    private boolean closed;

    Leavers(SerialContext context, ProbeScheduler<TrackedWorker> probes) {
        this.context = context;
        this.probes = probes;
    }

    /** Which leavers must keep their connections open for now (exact drain); default none. */
    void holdWhile(Predicate<TrackedWorker> held) {
        this.held = held;
    }

    /** Closes the connections of the held leavers that are held no more. */
    void closeFreed() {
        if (closed || heldOpen.isEmpty()) {
            return;
        }
        List<TrackedWorker> now = new ArrayList<>();
        heldOpen.removeIf(t -> !held.test(t) && now.add(t));
        now.forEach(probes::forget);
    }

    /** {@code left} are no candidates any more; their connections stay open until {@link #closeSoon}. */
    void left(List<TrackedWorker> left) {
        if (leftOpen.isEmpty()) {
            leftOpenSince = context.nanoTime();
        }
        leftOpen.addAll(left);
    }

    /** Queues the closing of what may be closed now (see the class's comment); no-op when nothing waits. */
    void closeSoon() {
        if (leftOpen.isEmpty() || closeQueued) {
            return;
        }
        closeQueued = true;
        context.execute(() -> {
            closeQueued = false;
            closeLeft();
        });
    }

    private void closeLeft() {
        if (closed || leftOpen.isEmpty()) {
            return;
        }
        leftOpen.removeIf(t -> held.test(t) && heldOpen.add(t));
        long waited = context.nanoTime() - leftOpenSince;
        boolean all = !probes.busy() || waited >= CLOSE_LEFT_WITHIN_NANOS;
        List<TrackedWorker> now = new ArrayList<>();
        leftOpen.removeIf(t -> (all || probes.busyWith(t)) && now.add(t));
        now.forEach(probes::forget);
        if (leftOpen.isEmpty()) {
            if (closeLeftLater != null) {
                closeLeftLater.cancel();
                closeLeftLater = null;
            }
        } else if (closeLeftLater == null || !closeLeftLater.pending()) {
            closeLeftLater = context.schedule(this::closeLeft, CLOSE_LEFT_WITHIN_NANOS - waited);
        }
    }

    /** Closes nothing more; returns the leavers whose connections are still open, for the caller to close. */
    List<TrackedWorker> close() {
        closed = true;
        if (closeLeftLater != null) {
            closeLeftLater.cancel();
        }
        List<TrackedWorker> open = new ArrayList<>(leftOpen);
        open.addAll(heldOpen);
        leftOpen.clear();
        heldOpen.clear();
        return open;
    }
}
