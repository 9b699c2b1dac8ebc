package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import java.util.stream.Collectors;

/** What a snapshot has, in one line for an exception or a failed call: why no worker is usable. */
public final class SnapshotSummary {

    /** How many excluded workers are listed with their reasons. */
    private static final int LISTED = 10;

    private SnapshotSummary() {
    }

    /**
     * What {@code s} has: compatible count, counts, policy, snapshot number, discovery's problem and
     * the first excluded workers with their reasons.
     */
    public static String of(FleetSnapshot s) {
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
