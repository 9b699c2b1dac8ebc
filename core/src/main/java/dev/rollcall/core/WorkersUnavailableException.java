package dev.rollcall.core;

import dev.rollcall.api.registry.FleetCounts;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.internal.snapshot.SnapshotSummary;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * Not enough compatible workers turned up in time. The message and {@link #counts()} say how the
 * candidates split: compatible, rejected by version, unreachable, pending; the message also says why
 * discovery is failing, if it is, and lists the first excluded candidates with their reasons (the
 * probe failures), so that a program without a logging binding still learns why.
 */
public final class WorkersUnavailableException extends TimeoutException {

    private static final long serialVersionUID = 1L;

    private final transient FleetSnapshot snapshot;

    WorkersUnavailableException(int wanted, Duration timeout, FleetSnapshot snapshot) {
        super(message(wanted, timeout, snapshot));
        this.snapshot = snapshot;
    }

    /** The counts of the last snapshot before the timeout. */
    public FleetCounts counts() {
        return snapshot.counts();
    }

    /** The last snapshot before the timeout. */
    public FleetSnapshot snapshot() {
        return snapshot;
    }

    private static String message(int wanted, Duration timeout, FleetSnapshot s) {
        return "wanted at least " + wanted + " compatible workers within " + timeout + ", have " + SnapshotSummary.of(s);
    }
}
