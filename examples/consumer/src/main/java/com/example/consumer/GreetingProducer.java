package com.example.consumer;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The worker's Flight service: any ticket gets one batch of one row, {@code hello from <version>}.
 * Thread-safe (each call has its own vectors); {@link #close()} closes the allocator after the worker stops.
 */
final class GreetingProducer extends NoOpFlightProducer implements AutoCloseable {

    static final String COLUMN = "greeting";
    private static final Schema SCHEMA = new Schema(List.of(
            new Field(COLUMN, FieldType.notNullable(ArrowType.Utf8.INSTANCE), null)));

    private final String version;
    private final BufferAllocator allocator;

    GreetingProducer(String version, BufferAllocator allocator) {
        this.version = version;
        this.allocator = allocator;
    }

    @Override
    public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
        try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
            VarCharVector text = (VarCharVector) root.getVector(COLUMN);
            text.allocateNew(1);
            text.setSafe(0, ("hello from " + version).getBytes(StandardCharsets.UTF_8));
            root.setRowCount(1);
            listener.start(root);
            listener.putNext();
            listener.completed();
        }
    }

    @Override
    public void close() {
        allocator.close();
    }
}
