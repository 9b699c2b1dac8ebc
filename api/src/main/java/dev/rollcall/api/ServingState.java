package dev.rollcall.api;

/**
 * Whether a worker takes new work, as it says itself over {@code WorkerInfo}: a worker that is not
 * {@link #SERVING} is never in the workers of a new snapshot.
 */
public enum ServingState {
    /** Takes new work: the default, and what a worker that never says otherwise means. */
    SERVING,
    /** Started but not ready yet (warming caches). */
    NOT_SERVING,
    /** Finishing its work in flight; takes no new work. Reversible. */
    DRAINING
}
