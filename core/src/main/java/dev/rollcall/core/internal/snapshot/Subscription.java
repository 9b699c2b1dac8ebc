package dev.rollcall.core.internal.snapshot;

/** Stops the deliveries to one listener of a {@link SnapshotFanOut}. */
@FunctionalInterface
public interface Subscription {

    /** Stops later deliveries (and the listener's thread); one already under way may still complete. Idempotent. */
    void close();
}
