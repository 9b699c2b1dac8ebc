package dev.rollcall.cli;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What a demo worker computes: for the ticket {@code sum:<from>:<to>} it streams one record batch of
 * one row, {@code version} (the worker's own version), {@code rows} ({@code to - from}) and
 * {@code sum} (the sum of {@code i * i} for {@code i} in {@code [from, to)}).
 *
 * <p>The version column is what lets the coordinator check, from the data itself, that the worker
 * it planned on is the one that answered.
 *
 * <p>Thread-safe: Flight calls {@link #getStream} on its executor, concurrently; each call has its
 * own vectors. The producer owns its allocator; {@link #close()} closes it (and so reports any buffer
 * a stream leaked), after the worker serving it has stopped.
 */
final class PartitionProducer extends NoOpFlightProducer implements AutoCloseable {

    static final String VERSION = "version";
    static final String ROWS = "rows";
    static final String SUM = "sum";
    static final Schema SCHEMA = new Schema(List.of(
            new Field(VERSION, FieldType.notNullable(ArrowType.Utf8.INSTANCE), null),
            new Field(ROWS, FieldType.notNullable(new ArrowType.Int(64, true)), null),
            new Field(SUM, FieldType.notNullable(new ArrowType.Int(64, true)), null)));

    private static final String PREFIX = "sum:";

    private final String version;
    private final BufferAllocator allocator;

    PartitionProducer(String version, BufferAllocator allocator) {
        this.version = version;
        this.allocator = allocator;
    }

    /** The ticket asking for the partition {@code [from, to)}. */
    static Ticket ticket(long from, long to) {
        return new Ticket((PREFIX + from + ":" + to).getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
        long rows;
        long sum;
        try {
            long[] range = parse(ticket);
            rows = range[1] - range[0];
            sum = sumOfSquares(range[0], range[1]);
        } catch (IllegalArgumentException e) {
            listener.error(CallStatus.INVALID_ARGUMENT.withDescription(e.getMessage()).toRuntimeException());
            return;
        }
        // The batch goes out within putNext (Flight copies references to the buffers into the
        // outgoing message), so the root may be closed as soon as the stream is completed.
        try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
            VarCharVector versions = (VarCharVector) root.getVector(VERSION);
            BigIntVector rowCounts = (BigIntVector) root.getVector(ROWS);
            BigIntVector sums = (BigIntVector) root.getVector(SUM);
            versions.allocateNew(1);
            rowCounts.allocateNew(1);
            sums.allocateNew(1);
            versions.setSafe(0, version.getBytes(StandardCharsets.UTF_8));
            rowCounts.set(0, rows);
            sums.set(0, sum);
            root.setRowCount(1);
            listener.start(root);
            listener.putNext();
            listener.completed();
        }
    }

    /** {@code [from, to)} from {@code sum:<from>:<to>}; the reason in the exception goes back to the caller. */
    static long[] parse(Ticket ticket) {
        String text = new String(ticket.getBytes(), StandardCharsets.UTF_8);
        String[] parts = text.split(":", -1);
        if (parts.length != 3 || !(parts[0] + ":").equals(PREFIX)) {
            throw new IllegalArgumentException("ticket '" + text + "' is not sum:<from>:<to>");
        }
        long from;
        long to;
        try {
            from = Long.parseLong(parts[1]);
            to = Long.parseLong(parts[2]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("ticket '" + text + "': from and to must be whole numbers");
        }
        if (from < 0 || to < from) {
            throw new IllegalArgumentException("ticket '" + text + "': need 0 <= from <= to");
        }
        return new long[] {from, to};
    }

    /** Sum of {@code i * i} over {@code [from, to)}; refuses ranges whose sum does not fit a long. */
    static long sumOfSquares(long from, long to) {
        try {
            long sum = 0;
            for (long i = from; i < to; i++) {
                sum = Math.addExact(sum, Math.multiplyExact(i, i));
            }
            return sum;
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("the sum of squares over [" + from + ", " + to + ") overflows a long");
        }
    }

    /** Closes the allocator: call after the worker serving this producer has stopped. */
    @Override
    public void close() {
        allocator.close();
    }

    @Override
    public String toString() {
        return "PartitionProducer[" + version + "]";
    }
}
