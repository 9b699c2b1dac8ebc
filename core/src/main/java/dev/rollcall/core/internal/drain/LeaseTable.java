package dev.rollcall.core.internal.drain;

import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * How many leases are open on each published snapshot. One {@link Slot} per snapshot, made when it
 * is published; a lease is one increment of the current slot's count and one decrement when it
 * closes, so {@link #acquire()} takes no lock and allocates nothing.
 *
 * <p>Why a lease never lands on a snapshot already given up: {@link #acquire()} increments the slot
 * it read and then reads the current slot again, retrying when a newer one was published meanwhile;
 * {@link #publish} stores the new slot and only then (on the serial context, in
 * {@link #holds}) reads the old one's count. Both are sequentially consistent, so either the lease
 * sees the newer slot and moves to it, or the publisher sees the lease.
 *
 * <p>{@link #acquire()} and {@link Slot#release()} from any thread; {@link #publish} and
 * {@link #holds} on the resolver's serial context only.
 */
public final class LeaseTable {

    /** The leases of one snapshot. */
    public static final class Slot {
        private static final AtomicIntegerFieldUpdater<Slot> OPEN =
                AtomicIntegerFieldUpdater.newUpdater(Slot.class, "open");

        private final LeaseTable table;
        private final FleetSnapshot snapshot;
        private volatile int open;

        private Slot(LeaseTable table, FleetSnapshot snapshot) {
            this.table = table;
            this.snapshot = snapshot;
        }

        /** The snapshot the leases of this slot pin. */
        public FleetSnapshot snapshot() {
            return snapshot;
        }

        /** Leases open on it now. */
        public int open() {
            return open;
        }

        /** One lease of this slot closed (call once per {@link #acquire()}); any thread. */
        public void release() {
            if (OPEN.decrementAndGet(this) == 0 && table.current != this) {
                table.lastOfOldClosed.run();
            }
        }
    }

    /** Told, on the closing thread, when the last lease of a snapshot that is no longer current closes. */
    private final Runnable lastOfOldClosed;
    private volatile Slot current;
    /** Older slots that may still have leases, oldest first; serial context only. */
    private final ArrayDeque<Slot> older = new ArrayDeque<>();

    /**
     * @param initial          the snapshot current at construction
     * @param lastOfOldClosed  runs on the thread that closed the last lease of a snapshot no longer
     *                         current: must be quick and must not block
     */
    public LeaseTable(FleetSnapshot initial, Runnable lastOfOldClosed) {
        this.lastOfOldClosed = lastOfOldClosed;
        this.current = new Slot(this, initial);
    }

    /** A lease on the current snapshot: its slot, whose {@link Slot#release()} ends it. Any thread, lock-free. */
    public Slot acquire() {
        for (;;) {
            Slot s = current;
            Slot.OPEN.incrementAndGet(s);
            if (current == s) {
                return s;
            }
            s.release(); // published meanwhile: the publisher may have counted this snapshot as free
        }
    }

    /** {@code next} is published; serial context. */
    public void publish(FleetSnapshot next) {
        Slot was = current;
        current = new Slot(this, next);
        if (was.open > 0) {
            older.addLast(was);
        }
        // Slots whose leases all closed before this publish are forgotten here, or in holds().
        older.removeIf(s -> s.open == 0);
    }

    /** The snapshot leases are taken on now. */
    public FleetSnapshot current() {
        return current.snapshot;
    }

    /** Whether the current snapshot lists {@code url} as compatible. */
    public boolean currentLists(String url) {
        return lists(current.snapshot, url);
    }

    /**
     * Whether an open lease holds an older snapshot that lists {@code url}; forgets the older slots
     * whose leases have all closed. Serial context; costs one look per older slot with open leases.
     */
    public boolean holds(String url) {
        for (Iterator<Slot> it = older.iterator(); it.hasNext(); ) {
            Slot s = it.next();
            if (s.open == 0) {
                it.remove();
            } else if (lists(s.snapshot, url)) {
                return true;
            }
        }
        return false;
    }

    /** Older snapshots with open leases (an estimate: a slot whose last lease just closed may count). */
    public int olderWithLeases() {
        return older.size();
    }

    private static boolean lists(FleetSnapshot snapshot, String url) {
        return snapshot.status(url).map(st -> st.state() == WorkerStatus.State.COMPATIBLE).orElse(false);
    }
}
