package dev.rollcall.core;

import dev.rollcall.api.registry.FleetSnapshot;

/**
 * Told about each new snapshot. Called on the resolver's listener thread
 * ({@code rollcall-listeners-<name>}), never on a network or discovery thread, one snapshot at a
 * time and in increasing number. A slow listener delays the others but never the resolver. An
 * exception is logged and does not stop later calls.
 */
@FunctionalInterface
public interface SnapshotListener {

    void onSnapshot(FleetSnapshot snapshot);

    /** Stops the calls to a listener; returned by {@link WorkerResolver#addListener}. */
    interface Registration extends AutoCloseable {
        /** Stops later calls; one already under way on the listener thread may still complete. Idempotent. */
        @Override
        void close();
    }
}
