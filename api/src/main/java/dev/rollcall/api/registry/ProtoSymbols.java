package dev.rollcall.api.registry;

import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import dev.rollcall.api.WorkerEndpoint;
import java.util.Optional;
import java.util.SortedSet;

/**
 * Read-only view: the protobuf schemas the workers serve, fetched once per worker version through
 * gRPC server reflection (see {@link ProtoSchema}).
 *
 * <p>Two versions may define one symbol differently, so every answer says whose schema it comes
 * from. The fleet-wide lookups ({@link #protoServices()}, {@link #fileContainingSymbol},
 * {@link #file}, {@link #method}) consider the versions of the <em>compatible</em> workers only and
 * answer from the newest of them (in semantic-version order) whose schema has what was asked for.
 * {@link #forVersion} and {@link #forWorker} give one version's schema, for work bound to one
 * worker. A version whose workers serve no reflection has an empty schema.
 *
 * <p>Every method answers from one immutable snapshot; implementations are thread-safe and never
 * block. Needs {@code protobuf-java} on the class path (the resolver has it).
 */
public interface ProtoSymbols {

    /** The full names of the gRPC services any compatible worker's schema defines, sorted. */
    SortedSet<String> protoServices();

    /**
     * The file that defines {@code symbol} (a service, method, message or enum, by full name), from
     * the newest compatible version whose schema has it.
     */
    Optional<FileDescriptor> fileContainingSymbol(String symbol);

    /** The file named {@code name}, from the newest compatible version whose schema has it. */
    Optional<FileDescriptor> file(String name);

    /**
     * The method {@code method} (simple name) of {@code service} (full name), from the newest
     * compatible version whose schema has it.
     */
    Optional<MethodDescriptor> method(String service, String method);

    /** The schema of {@code version}, when a worker of that version is in the snapshot and its schema is known. */
    Optional<ProtoSchema> forVersion(String version);

    /** The schema of the version {@code worker} reported, when known and the worker answered (compatible or rejected). */
    Optional<ProtoSchema> forWorker(WorkerEndpoint worker);
}
