package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.registry.FleetSnapshot;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * The facade's waits that fail with a {@link TimeoutException} ({@code awaitSettled},
 * {@code awaitVersion}, {@code await}): each waits on {@link SnapshotFanOut#awaitSatisfying} and,
 * when no snapshot did in time or the fan-out closed, fails naming what it waited for and the
 * current snapshot. On the caller's thread, which they block; any thread.
 */
public final class SnapshotAwaits {

    private final SnapshotFanOut fanOut;

    public SnapshotAwaits(SnapshotFanOut fanOut) {
        this.fanOut = fanOut;
    }

    /** Discovery has answered and no candidate is pending (see {@code WorkerResolver.awaitSettled}). */
    public FleetSnapshot settled(Duration timeout) throws TimeoutException, InterruptedException {
        Predicate<FleetSnapshot> settled = snap -> snap.number() > 0 && snap.counts().pending() == 0
                && fanOut.candidatesKnown();
        FleetSnapshot s = fanOut.awaitSatisfying(timeout, settled);
        if (s == null) {
            s = fanOut.current();
            String why = !fanOut.candidatesKnown()
                    ? s.discoveryProblem().orElse("discovery has not reported any candidates yet")
                    : s.counts().pending() + " of " + s.counts().candidates() + " candidates still have no verdict";
            throw new TimeoutException("the fleet did not settle within " + timeout
                    + (fanOut.closed() ? " (the resolver is closed)" : "") + ": " + why + "; the current one is " + s);
        }
        return s;
    }

    /** A snapshot numbered {@code number} or higher (see {@code WorkerResolver.awaitVersion}). */
    public FleetSnapshot version(long number, Duration timeout) throws TimeoutException, InterruptedException {
        FleetSnapshot s = fanOut.awaitSatisfying(timeout, snap -> snap.number() >= number);
        if (s == null) {
            throw new TimeoutException("snapshot " + number + " was not published within " + timeout
                    + (fanOut.closed() ? " (the resolver is closed)" : "") + "; the current one is " + fanOut.current());
        }
        return s;
    }

    /** A snapshot that satisfies {@code condition} (see {@code WorkerResolver.await}). */
    public FleetSnapshot satisfying(Predicate<? super FleetSnapshot> condition, Duration timeout)
            throws TimeoutException, InterruptedException {
        FleetSnapshot s = fanOut.awaitSatisfying(timeout, condition);
        if (s == null) { // the condition is not tested again: it may be slow
            throw new TimeoutException("no snapshot satisfied the condition within " + timeout
                    + (fanOut.closed() ? " (the resolver is closed)" : "") + "; last: " + fanOut.current());
        }
        return s;
    }
}
