package dev.rollcall.benchmarks;

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
 * (parked), so that a scenario can have calls in flight when a worker goes. Thread-safe.
 */
final class TenRows extends NoOpFlightProducer {

    private static final Schema SCHEMA = new Schema(List.of(Field.nullable("n", new ArrowType.Int(32, true))));

    private final BufferAllocator allocator;
    private final long workNanos;

    TenRows(BufferAllocator allocator, long workNanos) {
        this.allocator = allocator;
        this.workNanos = workNanos;
    }

    @Override
    public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
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
}
