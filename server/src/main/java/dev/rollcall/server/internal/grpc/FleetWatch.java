package dev.rollcall.server.internal.grpc;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One WatchFleet stream: a slot holding the newest snapshot this client has not been sent yet.
 * {@link #offer} replaces what the slot holds (latest wins, nothing queues) and sends it at once if
 * the stream can take it; otherwise the stream's next {@code onReady} sends it. A client that stops
 * reading therefore costs one slot, and whoever offers never waits for it.
 *
 * <p>A stream that asked for change messages is sent a snapshot's change message exactly when the
 * last message it was sent is that change message's base, else the whole snapshot.
 *
 * <p>Thread-safe: {@link #offer} from the resolver's listener thread, {@link #drain} from gRPC's;
 * the calls on the {@link ServerCall} are serialized by a work counter, never by a lock held while
 * a client is written to.
 */
final class FleetWatch {

    /** What the watchers share: where deliveries and superseded snapshots are counted. */
    interface Tally {
        void delivered();

        void skipped();
    }

    private final ServerCall<?, byte[]> call;
    private final Tally tally;
    private final AtomicInteger work = new AtomicInteger();
    private EncodedSnapshot slot; // guarded by this
    private long offered = -1; // guarded by this: the newest number offered, never go back
    private boolean headersSent; // only in drain
    private long sent = -1; // only in drain: the number of the last message handed to the call
    private volatile boolean changesOnly; // set once, before the first offer
    private volatile boolean ended;
    private volatile Status closing; // set once: the service stops

    FleetWatch(ServerCall<?, byte[]> call, Tally tally) {
        this.call = call;
        this.tally = tally;
    }

    /**
     * The client asked for change messages: from now on a snapshot whose change message is based on
     * the number this stream was sent last goes as that message. Called before the first offer.
     */
    void sendChanges() {
        changesOnly = true;
    }

    /** Makes {@code snapshot} the next to send, unless a newer one was offered already. */
    void offer(EncodedSnapshot snapshot) {
        boolean superseded;
        synchronized (this) {
            if (snapshot.number() <= offered) {
                return;
            }
            offered = snapshot.number();
            superseded = slot != null;
            slot = snapshot;
        }
        if (superseded) {
            tally.skipped();
        }
        drain();
    }

    /** The call ended (cancelled, connection gone, service stopping): send nothing more. */
    void end() {
        ended = true;
        synchronized (this) {
            slot = null;
        }
    }

    /** Sends what the slot holds while the stream can take it; any thread. */
    void drain() {
        if (work.getAndIncrement() != 0) {
            return; // the thread inside will look again
        }
        int missed = 1;
        do {
            sendIfReady();
            missed = work.addAndGet(-missed);
        } while (missed != 0);
    }

    /** Ends the stream with {@code status} (the service stops), on the same serialized path as sends. */
    void close(Status status) {
        closing = status;
        drain();
    }

    private void sendIfReady() {
        if (ended) {
            return;
        }
        if (closing != null) {
            end();
            try {
                call.close(closing, new Metadata());
            } catch (RuntimeException e) {
                // cancelled meanwhile: the client has its status already
            }
            return;
        }
        if (!call.isReady()) {
            return;
        }
        EncodedSnapshot next;
        synchronized (this) {
            next = slot;
            slot = null;
        }
        if (next == null) {
            return;
        }
        try {
            if (!headersSent) {
                call.sendHeaders(new Metadata());
                headersSent = true;
            }
            // Decided here, at the send, not at the offer: only this path knows what the client holds,
            // and a slot overwritten while the client did not read leaves it a number behind the base.
            call.sendMessage(changesOnly ? next.bytesAfter(sent) : next.bytes());
            sent = next.number();
            tally.delivered();
        } catch (RuntimeException e) {
            // The call closed under us (cancelled between isReady and the send): nothing more to send.
            end();
        }
    }
}
