package dev.rollcall.server.internal.grpc;

import dev.rollcall.api.Requirements;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import io.grpc.Status;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/**
 * The snapshots that remote holds (HoldFleet) keep: one {@link SnapshotLease} per snapshot number,
 * shared by every hold of that number and closed when the last of them lets go. A number can be
 * held when it is the current snapshot's, or while another hold keeps it; any other number may
 * list workers already released, so it is refused. A hold with requirements holds the whole
 * snapshot (every worker in it stays held, as exact drain counts) and is answered with it narrowed.
 *
 * <p>Thread-safe; the lock is held only for the table's own bookkeeping and for
 * {@link WorkerResolver#lease()}, which never blocks.
 */
final class HeldSnapshots {

    /** One held snapshot: its lease, its encoding, and how many holds share it. */
    static final class Held {
        private final SnapshotLease lease;
        private final EncodedSnapshot encoded;
        private final byte[] response;
        private final BiFunction<FleetSnapshot, Requirements, EncodedSnapshot> encoding;
        /** The answers to holds with requirements, by requirements: at most one per hold sharing this. */
        private final Map<Requirements, byte[]> narrowed = new ConcurrentHashMap<>();
        private int holds; // guarded by the table

        private Held(SnapshotLease lease, BiFunction<FleetSnapshot, Requirements, EncodedSnapshot> encoding) {
            this.lease = lease;
            this.encoding = encoding;
            this.encoded = encoding.apply(lease.snapshot(), Requirements.none());
            this.response = encoded.holdResponse();
        }

        /** The number held. */
        long number() {
            return encoded.number();
        }

        /** The {@code HoldFleetResponse} every hold of this snapshot is answered with, serialized once. */
        byte[] response() {
            return response;
        }

        /** The {@code HoldFleetResponse} for a hold of this snapshot with {@code requirements}: it narrowed. */
        byte[] response(Requirements requirements) {
            if (requirements.isEmpty()) {
                return response;
            }
            return narrowed.computeIfAbsent(requirements,
                    r -> encoding.apply(lease.snapshot(), r).holdResponse());
        }
    }

    /** A hold granted, or why not. */
    record Grant(Held held, Status refusal) {
    }

    private final WorkerResolver resolver;
    private final BiFunction<FleetSnapshot, Requirements, EncodedSnapshot> encoding;
    private final Map<Long, Held> byNumber = new HashMap<>();
    private boolean closed; // guarded by this

    /**
     * {@code encoding}: the bytes of a snapshot to hold (as published) narrowed to requirements (the
     * published ones when it has them).
     */
    HeldSnapshots(WorkerResolver resolver, BiFunction<FleetSnapshot, Requirements, EncodedSnapshot> encoding) {
        this.resolver = resolver;
        this.encoding = encoding;
    }

    /** Holds snapshot {@code number} (0: the current one) for one more hold. */
    synchronized Grant acquire(long number) {
        if (closed) {
            return new Grant(null, Status.UNAVAILABLE.withDescription("the fleet service is stopping"));
        }
        Held shared = byNumber.get(number);
        if (shared != null) {
            shared.holds++;
            return new Grant(shared, null);
        }
        long current = resolver.pin().number();
        if (number != 0 && number != current) {
            return new Grant(null, Status.FAILED_PRECONDITION.withDescription("snapshot " + number
                    + " cannot be held: it is not the current one (" + current + ") and no other hold keeps it, so"
                    + " its workers may already be released; hold " + current + " or 0 (the current one)"));
        }
        SnapshotLease lease = resolver.lease();
        long leased = lease.snapshot().number();
        if (number != 0 && leased != number) {
            lease.close();
            return new Grant(null, Status.FAILED_PRECONDITION.withDescription("snapshot " + number
                    + " cannot be held: snapshot " + leased + " replaced it while it was being held; hold "
                    + leased + " or 0 (the current one)"));
        }
        Held held = byNumber.get(leased);
        if (held != null) { // number 0, and another hold keeps the current one: share it
            lease.close();
        } else {
            held = new Held(lease, encoding);
            byNumber.put(leased, held);
        }
        held.holds++;
        return new Grant(held, null);
    }

    /** One hold of {@code held} ends; the last one closes its lease. Call once per grant. */
    synchronized void release(Held held) {
        if (--held.holds == 0) {
            byNumber.remove(held.encoded.number(), held);
            held.lease.close();
        }
    }

    /** Lets go of every snapshot (the service stops); later acquires are refused. */
    synchronized void close() {
        closed = true;
        byNumber.values().forEach(h -> h.lease.close());
        byNumber.clear();
    }
}
