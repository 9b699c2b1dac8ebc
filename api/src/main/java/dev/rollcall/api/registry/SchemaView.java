package dev.rollcall.api.registry;

import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import dev.rollcall.api.WorkerEndpoint;
import java.util.Optional;
import java.util.SortedSet;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The protobuf-typed views of one snapshot ({@link ProtoSymbols}, {@link KeyExtractors}) over its
 * schema index, made on first use so that a snapshot alone never loads protobuf. Immutable;
 * thread-safe as the snapshot is.
 */
final class SchemaView implements ProtoSymbols, KeyExtractors {

    private final Supplier<SchemaIndex> schemas;
    private final Function<WorkerEndpoint, Optional<WorkerStatus>> status;

    /**
     * @param schemas the snapshot's schema index (built on first use by the snapshot)
     * @param status  the snapshot's status of a worker, by its URL
     */
    SchemaView(Supplier<SchemaIndex> schemas, Function<WorkerEndpoint, Optional<WorkerStatus>> status) {
        this.schemas = schemas;
        this.status = status;
    }

    @Override
    public SortedSet<String> protoServices() {
        return schemas.get().protoServices();
    }

    @Override
    public Optional<FileDescriptor> fileContainingSymbol(String symbol) {
        return schemas.get().fileContainingSymbol(symbol);
    }

    @Override
    public Optional<FileDescriptor> file(String name) {
        return schemas.get().file(name);
    }

    @Override
    public Optional<MethodDescriptor> method(String service, String method) {
        return schemas.get().method(service, method);
    }

    @Override
    public Optional<ProtoSchema> forVersion(String version) {
        return schemas.get().forVersion(version);
    }

    @Override
    public Optional<ProtoSchema> forWorker(WorkerEndpoint worker) {
        return schemas.get().forWorker(status.apply(worker));
    }

    @Override
    public Optional<String> keyPath(String service, String method) {
        return schemas.get().keyPath(service, method);
    }

    @Override
    public String extractKey(String service, String method, byte[] request) {
        return schemas.get().extractKey(service, method, request);
    }
}
