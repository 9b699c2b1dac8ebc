package dev.rollcall.core;

import java.util.Objects;

/**
 * Whether a coordinator has enough compatible workers to take work, by the rule
 * {@code rollcall.readiness.min-workers} (and {@code rollcall.readiness.version}), on a snapshot not
 * stale for longer than {@code rollcall.readiness.max-stale}; what
 * {@link WorkerResolver#ready()} answers, for a readiness probe or a health check. Immutable.
 *
 * @param ready             whether {@code compatibleWorkers} reaches {@code required} and the snapshot
 *                          is not stale for longer than {@code max-stale}
 * @param compatibleWorkers the compatible workers of the snapshot that count (of the required
 *                          version, when one is set)
 * @param required          how many must be compatible; 0 means always ready
 * @param reason            one line for people and logs: the counts, and why not when not ready
 *                          (staleness beyond {@code max-stale}, the fleet's counts, discovery's problem)
 */
public record Readiness(boolean ready, int compatibleWorkers, int required, String reason) {

    public Readiness {
        Objects.requireNonNull(reason, "reason");
    }
}
