package dev.rollcall.api.registry;

/**
 * Internal: the resolver's way to build a snapshot knowing the one it follows. Not API — for
 * Rollcall's own modules (the architecture test allows {@code rollcall-core} alone), and it may
 * change in any release, as grpc-java's {@code Internal*} classes may.
 *
 * <p>The result equals {@link FleetSnapshot.Builder#build()}'s; it is only cheaper when few statuses
 * changed: statuses that are {@code previous}'s own objects, in its order, are not read again, so a
 * resolver publishing after 100 of 10,000 candidates changed reads 100 statuses, not 10,000.
 * Thread-safety as the builder's: confined to the caller.
 */
public final class InternalSnapshots {

    private InternalSnapshots() {
    }

    /** {@code builder}'s snapshot, made knowing {@code previous} ({@code null}: none). */
    public static FleetSnapshot buildAfter(FleetSnapshot.Builder builder, FleetSnapshot previous) {
        return builder.build(previous);
    }

    /**
     * As {@link #buildAfter(FleetSnapshot.Builder, FleetSnapshot)}, with {@code statuses} handed over
     * instead of added to {@code builder} (which must hold none): the snapshot keeps the array as it
     * is, so the caller must not change it afterwards. One copy fewer per snapshot than
     * {@link FleetSnapshot.Builder#statuses}, which copies what it is given.
     *
     * @throws NullPointerException if a status is null
     * @throws IllegalStateException if statuses were added to {@code builder}
     */
    public static FleetSnapshot buildAfter(FleetSnapshot.Builder builder, WorkerStatus[] statuses,
                                           FleetSnapshot previous) {
        return builder.buildOwned(statuses, previous);
    }
}
