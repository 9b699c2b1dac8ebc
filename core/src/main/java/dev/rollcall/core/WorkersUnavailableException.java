package dev.rollcall.core;

import dev.rollcall.api.registry.FleetCounts;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * Not enough compatible workers turned up in time. The message and {@link #counts()} say how the
 * candidates split: compatible, rejected by version, unreachable, pending; the message also says why
 * discovery is failing, if it is, and lists the first excluded candidates with their reasons (the
 * probe failures), so that a program without a logging binding still learns why.
 */
public final class WorkersUnavailableException extends TimeoutException {

    private static final long serialVersionUID = 1L;
    private static final int LISTED = 10;

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
        return "wanted at least " + wanted + " compatible workers within " + timeout + ", have " + describe(s);
    }

    /**
     * What {@code s} has: compatible count, counts, policy, snapshot number, discovery's problem and
     * the first excluded workers with their reasons.
     */
    static String describe(FleetSnapshot s) {
        StringBuilder sb = new StringBuilder(s.counts().compatible() + " (" + s.counts() + "; policy " + s.policy()
                + "; snapshot " + s.number() + ")");
        if (s.discoveryProblem().isPresent()) {
            sb.append("; ").append(s.discoveryProblem().get());
        } else {
            s.staleSince().ifPresent(t -> sb.append("; discovery failing since ").append(t));
        }
        String excluded = s.statuses().stream()
                .filter(st -> st.state() != WorkerStatus.State.COMPATIBLE)
                .limit(LISTED)
                .map(WorkerStatus::toString)
                .collect(Collectors.joining("; "));
        if (!excluded.isEmpty()) {
            sb.append(". Excluded: ").append(excluded);
            long more = s.counts().candidates() - s.counts().compatible() - LISTED;
            if (more > 0) {
                sb.append("; and ").append(more).append(" more");
            }
        }
        return sb.toString();
    }
}
