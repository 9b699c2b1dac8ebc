package dev.rollcall.api.policy;

import dev.rollcall.api.WorkerInfo;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a {@link VersionPolicy} chose from the probed workers: those to use, and those left out with
 * the reason for each. Every worker it was given is in exactly one of the two lists. Immutable.
 *
 * <p>A policy that picks one version cohort names it in {@code cohort} and says in
 * {@code explanation} why it chose it (thresholds, the cohort it switched from); the resolver puts
 * both in the snapshot's {@link dev.rollcall.api.registry.SelectionReport} and logs them once per
 * change.
 *
 * @param accepted    the compatible workers
 * @param rejected    the others, each with its reason
 * @param cohort      the version the policy chose, when it chooses one cohort
 * @param explanation the policy's own account of its choice, e.g. {@code "2.1.0 has 6 of 10 allowed
 *                    workers (>= 60%); switched from 2.0.0"}; {@code ""} when there is nothing to add
 */
public record Selection(List<WorkerInfo> accepted, List<Rejection> rejected, Optional<String> cohort,
                        String explanation) {

    public Selection {
        accepted = List.copyOf(accepted);
        rejected = List.copyOf(rejected);
        Objects.requireNonNull(cohort, "cohort");
        Objects.requireNonNull(explanation, "explanation");
    }

    /** A selection without a chosen cohort or explanation: a per-worker rule's. */
    public Selection(List<WorkerInfo> accepted, List<Rejection> rejected) {
        this(accepted, rejected, Optional.empty(), "");
    }

    /** A worker a policy left out, and why. */
    public record Rejection(WorkerInfo worker, String reason) {
        public Rejection {
            Objects.requireNonNull(worker, "worker");
            Objects.requireNonNull(reason, "reason");
        }
    }
}
