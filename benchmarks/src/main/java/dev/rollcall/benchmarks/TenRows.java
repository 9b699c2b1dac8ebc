package dev.rollcall.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The benchmarks' Flight producer: ten rows per {@code DoGet}, after {@code workNanos} of "work"
 * (parked), so that a scenario can have calls in flight when a worker goes; for a ticket
 * {@code mib:<n>}, a stream of {@code n} record batches of 1 MiB each (262,144 ints), sent as fast
 * as the client takes them. Thread-safe.
 */
final class TenRows extends NoOpFlightProducer {

    private static final Schema SCHEMA = new Schema(List.of(Field.nullable("n", new ArrowType.Int(32, true))));

    private final BufferAllocator allocator;
    private final long workNanos;

    TenRows(BufferAllocator allocator, long workNanos) {
        this.allocator = allocator;
        this.workNanos = workNanos;
    }

    /** Ints in one 1 MiB batch. */
    static final int BATCH_ROWS = 1 << 18;

    /** The ticket of a stream of {@code mib} batches of 1 MiB. */
    static Ticket mebibytes(int mib) {
        return new Ticket(("mib:" + mib).getBytes(StandardCharsets.US_ASCII));
    }

    @Override
    public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
        String asked = new String(ticket.getBytes(), StandardCharsets.US_ASCII);
        if (asked.startsWith("mib:")) {
            stream(Integer.parseInt(asked.substring(4)), listener);
            return;
        }
        if (workNanos > 0) {
            LockSupport.parkNanos(workNanos); // the "work"
        }
        try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
            IntVector n = (IntVector) root.getVector("n");
            n.allocateNew(10);
            for (int i = 0; i < 10; i++) {
                n.set(i, i);
            }
            root.setRowCount(10);
            listener.start(root);
            listener.putNext();
            listener.completed();
        }
    }

    /**
     * Sends {@code batches} from the stream's ready callback, never blocking a thread: the servers'
     * Flight calls share a small pool, whose threads would otherwise all wait for their clients,
     * and so would the ready callbacks that end the wait.
     */
    private void stream(int batches, ServerStreamListener listener) {
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
        IntVector n = (IntVector) root.getVector("n");
        n.allocateNew(BATCH_ROWS);
        for (int i = 0; i < BATCH_ROWS; i++) {
            n.set(i, i);
        }
        root.setRowCount(BATCH_ROWS);
        int[] left = {batches}; // -1 once over; guarded by itself
        Runnable send = () -> {
            synchronized (left) {
                while (left[0] > 0 && listener.isReady() && !listener.isCancelled()) {
                    listener.putNext();
                    left[0]--;
                }
                if (left[0] == 0) {
                    left[0] = -1;
                    listener.completed();
                    root.close();
                }
            }
        };
        listener.setOnCancelHandler(() -> {
            synchronized (left) {
                if (left[0] >= 0) {
                    left[0] = -1;
                    root.close();
                }
            }
        });
        listener.start(root);
        listener.setOnReadyHandler(send);
        send.run();
    }
}
