package dev.rollcall.api.policy;

import dev.rollcall.api.WorkerInfo;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link VersionPolicy} chose from the probed workers: those to use, and those left out with
 * the reason for each. Every worker it was given is in exactly one of the two lists. Immutable.
 *
 * @param accepted the compatible workers
 * @param rejected the others, each with its reason
 */
public record Selection(List<WorkerInfo> accepted, List<Rejection> rejected) {

    public Selection {
        accepted = List.copyOf(accepted);
        rejected = List.copyOf(rejected);
    }

    /** A worker a policy left out, and why. */
    public record Rejection(WorkerInfo worker, String reason) {
        public Rejection {
            Objects.requireNonNull(worker, "worker");
            Objects.requireNonNull(reason, "reason");
        }
    }
}
