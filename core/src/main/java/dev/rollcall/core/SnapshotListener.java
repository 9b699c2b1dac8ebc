package dev.rollcall.core;

import dev.rollcall.api.registry.FleetSnapshot;

/**
 * Told about new snapshots. Called on a thread of the listener's own
 * ({@code rollcall-listeners-<name>-N}), never on a network or discovery thread, one snapshot at a
 * time and in increasing number, first with the one current at registration. A slow or blocked
 * listener delays only itself: while it is busy, newer snapshots replace the one waiting for it
 * (latest wins), so it may skip some. An exception is logged and does not stop later calls.
 */
@FunctionalInterface
public interface SnapshotListener {

    void onSnapshot(FleetSnapshot snapshot);

    /** Stops the calls to a listener; returned by {@link WorkerResolver#addListener}. */
    interface Registration extends AutoCloseable {
        /** Stops later calls (and the listener's thread); one already under way may still complete. Idempotent. */
        @Override
        void close();
    }
}
