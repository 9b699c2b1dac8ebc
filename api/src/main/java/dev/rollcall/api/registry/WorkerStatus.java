package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Where one candidate endpoint stands in a snapshot. Immutable.
 *
 * @param endpoint the candidate, as discovery last reported it
 * @param state    whether it is used, and if not, why not in one word
 * @param reason   why it is not compatible ({@code ""} when it is): the policy's reason, or the
 *                 probe failure
 * @param info     what the worker last reported, when it has answered a probe
 * @param holders  for a {@link State#DRAINING} worker whose own last answer said it (exact drain,
 *                 {@code WorkerInfoResponse.holders}): how many coordinators still hold it, 0 when
 *                 none does (it stops once its calls in flight are done); empty for every other
 *                 worker: not draining, drained by discovery's label only, or probed over a protocol
 *                 that carries no count. It changes only while the worker drains, each change a new
 *                 snapshot. The constructor throws {@link IllegalArgumentException} when
 *                 {@code holders} is negative, or present for a worker that is not {@code DRAINING}
 */
public record WorkerStatus(WorkerEndpoint endpoint, State state, String reason, Optional<WorkerInfo> info,
                           OptionalInt holders) {

    public WorkerStatus {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(info, "info");
        Objects.requireNonNull(holders, "holders");
        if (holders.isPresent() && (state != State.DRAINING || holders.getAsInt() < 0)) {
            throw new IllegalArgumentException("holders " + holders.getAsInt() + " for a worker " + state
                    + ": a count of holders is for a DRAINING worker, and at least 0 (" + endpoint.url() + ")");
        }
    }

    /** A status without a count of holders (as before exact drain). */
    public WorkerStatus(WorkerEndpoint endpoint, State state, String reason, Optional<WorkerInfo> info) {
        this(endpoint, state, reason, info, OptionalInt.empty());
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
        NOT_SERVING,
        /**
         * Answered, and accepted by the policy, but not in this coordinator's subset
         * ({@code rollcall.subset.size}): other coordinators use it, this one does not. Never in the
         * workers of a snapshot, a view or a {@code rollcall:} channel; becomes {@link #COMPATIBLE}
         * when a member of the subset goes and it is next in rank. Only with subsets on.
         */
        OUTSIDE_SUBSET,
        /**
         * Answered and accepted by the policy, but lacks what the query this snapshot was narrowed for
         * requires ({@link FleetSnapshot#requiring}); the reason names the first requirement it lacks,
         * e.g. {@code lacks udf:geo_distance}. Only in a narrowed snapshot (a lease's with
         * requirements, {@code workersWith}), never in one the resolver publishes; the same worker is
         * {@link #COMPATIBLE} there.
         */
        LACKS_REQUIREMENT
    }

    @Override
    public String toString() {
        return endpoint.url() + " " + state + (reason.isEmpty() ? "" : " (" + reason + ")");
    }
}
