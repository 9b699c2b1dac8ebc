package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.Objects;
import java.util.Optional;

/**
 * Where one candidate endpoint stands in a snapshot. Immutable.
 *
 * @param endpoint the candidate, as discovery last reported it
 * @param state    whether it is used, and if not, why not in one word
 * @param reason   why it is not compatible ({@code ""} when it is): the policy's reason, or the
 *                 probe failure
 * @param info     what the worker last reported, when it has answered a probe
 */
public record WorkerStatus(WorkerEndpoint endpoint, State state, String reason, Optional<WorkerInfo> info) {

    public WorkerStatus {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(info, "info");
    }

    /** The places a candidate can be. */
    public enum State {
        /** Not probed yet, or being probed again after its connection dropped; not used meanwhile. */
        PENDING,
        /** Answered, and the policy accepts it: coordinators may use it. */
        COMPATIBLE,
        /** Answered, and the policy rejects it. */
        REJECTED,
        /** Did not answer (refused, timed out, failed); retried with backoff. */
        UNREACHABLE,
        /**
         * Answered, and says it is finishing its work in flight and takes no new work: never in the
         * workers of a new snapshot (a snapshot pinned before keeps it). Reversible.
         */
        DRAINING,
        /** Answered, and says it is not ready yet (warming up): never in the workers of a new snapshot. */
        NOT_SERVING
    }

    @Override
    public String toString() {
        return endpoint.url() + " " + state + (reason.isEmpty() ? "" : " (" + reason + ")");
    }
}
