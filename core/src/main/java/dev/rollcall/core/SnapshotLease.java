package dev.rollcall.core;

import dev.rollcall.api.Requirements;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.internal.drain.LeaseTable;
import dev.rollcall.core.internal.snapshot.SnapshotFanOut;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * One query's hold on one snapshot, from {@link WorkerResolver#lease()}: the snapshot current when
 * the lease was taken (narrowed to the query's requirements, from
 * {@link WorkerResolver#lease(Requirements)}), pinned for the query's whole life (sizing, planning, routing, the last Flight
 * stream), until {@link #close()}.
 *
 * <pre>{@code
 * try (SnapshotLease lease = resolver.lease()) {
 *     FleetSnapshot snapshot = lease.snapshot();
 *     run(plan(snapshot.workers()));      // every stage on the workers of this one snapshot
 * }
 * }</pre>
 *
 * <h2>What it promises</h2>
 * <ul>
 *   <li>{@link #snapshot()} is the same snapshot for the lease's whole life, whatever is published
 *       meanwhile.</li>
 *   <li>With exact drain ({@code rollcall.drain.exact=true}): while the lease is open, no worker that
 *       its snapshot lists is released, so a draining worker keeps serving the query until it is
 *       done. Once the resolver has published a snapshot without a draining worker and the last lease
 *       on a snapshot that lists it closes, the resolver releases it at once and the worker may stop.
 *       A lease that is never closed holds its workers until their own {@code shutdown-grace} ends
 *       the wait.</li>
 *   <li>Without exact drain a lease only pins, as {@link WorkerResolver#pin()} does: workers keep
 *       their {@code drain-quiet} rule, and code can take leases whatever the setting.</li>
 * </ul>
 *
 * <h2>Threads and failures</h2>
 * Taking a lease never blocks and takes no lock (one counter increment, no allocation but the lease);
 * reads of the resolver never wait for leases. {@link #close()} may be called from any thread, also
 * another than the one that took the lease, and is idempotent: only the first call lets go. A lease
 * taken or closed after the resolver closed only pins. Closing never throws.
 */
public final class SnapshotLease implements AutoCloseable {

    private static final AtomicIntegerFieldUpdater<SnapshotLease> CLOSED =
            AtomicIntegerFieldUpdater.newUpdater(SnapshotLease.class, "closed");

    private final FleetSnapshot snapshot;
    /** The count this lease adds to; null when exact drain is off (a lease then only pins). */
    private final LeaseTable.Slot slot;
    private volatile int closed;

    SnapshotLease(FleetSnapshot snapshot, LeaseTable.Slot slot) {
        this.snapshot = snapshot;
        this.slot = slot;
    }

    /** A lease of the current snapshot: held in {@code table} under exact drain ({@code null}: off, it only pins). */
    static SnapshotLease take(LeaseTable table, SnapshotFanOut snapshots) {
        if (table == null) {
            return new SnapshotLease(snapshots.current(), null);
        }
        LeaseTable.Slot slot = table.acquire();
        return new SnapshotLease(slot.snapshot(), slot);
    }

    /**
     * This lease, showing its snapshot narrowed to {@code requirements} (itself for none); the same
     * hold (slot), handed over.
     */
    SnapshotLease narrowedTo(Requirements requirements) {
        return requirements.isEmpty() ? this : new SnapshotLease(snapshot.requiring(requirements), slot);
    }

    /** The pinned snapshot: the same one for the lease's whole life, also after {@link #close()}. */
    public FleetSnapshot snapshot() {
        return snapshot;
    }

    /** Lets go of the snapshot; idempotent, any thread, never blocks. */
    @Override
    public void close() {
        if (CLOSED.compareAndSet(this, 0, 1) && slot != null) {
            slot.release();
        }
    }

    @Override
    public String toString() {
        return "SnapshotLease[snapshot " + snapshot.number() + (closed != 0 ? ", closed]" : "]");
    }
}
