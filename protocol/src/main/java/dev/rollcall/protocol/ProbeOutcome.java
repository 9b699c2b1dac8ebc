package dev.rollcall.protocol;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerInfo;
import io.grpc.Status;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * What one {@code WorkerInfo} probe came to: the worker {@linkplain Answered answered}, or the probe
 * {@linkplain Failed failed} with a gRPC status code and a short reason. An expected failure (a
 * refused connection, a deadline, an answer that breaks the protocol's bounds) is a value, never an
 * exception; futures of outcomes never complete exceptionally. Immutable.
 */
public sealed interface ProbeOutcome permits ProbeOutcome.Answered, ProbeOutcome.Failed {

    /** Whether the worker answered. */
    default boolean answered() {
        return this instanceof Answered;
    }

    /**
     * The worker answered with {@code info}, saying whether it takes new work ({@code state}; workers
     * that never say anything are {@link ServingState#SERVING}). {@code revision} is the answer's
     * place among those of its process ({@code WorkerInfoResponse.revision}, compared unsigned): it
     * grows with every change the process announces, so that of two answers of one instance the
     * one with the lower revision is the older, whichever arrived last; 0 when the worker sends none
     * (workers from before the field), and such answers are taken in the order they arrive.
     * {@code holders} is, for a {@link ServingState#DRAINING} answer that carries it (exact drain,
     * {@code WorkerInfoResponse.holders}), how many coordinators still hold the worker (0: none);
     * empty for any other answer and for protocols without the count. The constructor throws
     * {@link IllegalArgumentException} when {@code holders} is negative or present while not draining.
     */
    record Answered(WorkerInfo info, ServingState state, long revision, OptionalInt holders) implements ProbeOutcome {
        public Answered {
            Objects.requireNonNull(info, "info");
            Objects.requireNonNull(state, "state");
            Objects.requireNonNull(holders, "holders");
            if (holders.isPresent() && (state != ServingState.DRAINING || holders.getAsInt() < 0)) {
                throw new IllegalArgumentException("holders " + holders.getAsInt() + " in an answer " + state
                        + ": a count of holders is for a DRAINING answer, and at least 0");
            }
        }

        /** An answer without a count of holders. */
        public Answered(WorkerInfo info, ServingState state, long revision) {
            this(info, state, revision, OptionalInt.empty());
        }

        /** An answer without a revision. */
        public Answered(WorkerInfo info, ServingState state) {
            this(info, state, 0);
        }

        /** A worker that serves, without a revision. */
        public Answered(WorkerInfo info) {
            this(info, ServingState.SERVING, 0);
        }
    }

    /**
     * The probe failed. {@code code} is the call's gRPC status ({@code UNAVAILABLE} for a refused or
     * lost connection, {@code DEADLINE_EXCEEDED} for no answer in time, {@code UNIMPLEMENTED} for a
     * server that is not a Rollcall worker, {@code INTERNAL} for an answer that breaks the protocol's
     * bounds). {@code reason} is short, human and stable across retries of the same failure, e.g.
     * {@code UNAVAILABLE: io exception: Connection refused: /10.0.0.7:7001}.
     */
    record Failed(Status.Code code, String reason) implements ProbeOutcome {
        public Failed {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(reason, "reason");
        }
    }
}
