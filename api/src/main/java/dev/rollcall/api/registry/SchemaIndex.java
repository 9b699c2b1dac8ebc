package dev.rollcall.api.registry;

import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import dev.rollcall.api.WorkerInfo;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The schema part of one snapshot: the schemas of its workers' versions, the fleet-wide lookups
 * over the compatible ones (newest first), key extraction and key routing. Immutable.
 */
final class SchemaIndex {

    private final Map<String, ProtoSchema> byVersion;
    /** The schemas of the compatible workers' versions, newest version first. */
    private final List<ProtoSchema> newestFirst;
    private final SortedSet<String> protoServices;
    private final KeyPaths keys;

    /**
     * @param answeredVersions the versions of the compatible and rejected workers (the snapshot's histogram)
     * @param compatibleVersions the versions of the compatible workers
     */
    SchemaIndex(java.util.Set<String> answeredVersions, java.util.Set<String> compatibleVersions,
                Map<String, ProtoSchema> schemas, KeyPaths keys) {
        this.keys = keys;
        if (schemas.isEmpty()) {
            this.byVersion = Map.of();
            this.newestFirst = List.of();
            this.protoServices = Collections.emptySortedSet();
            return;
        }
        Map<String, ProtoSchema> kept = new HashMap<>();
        schemas.forEach((version, schema) -> {
            if (answeredVersions.contains(version)) {
                kept.put(version, schema);
            }
        });
        this.byVersion = Map.copyOf(kept);
        List<String> versions = new ArrayList<>(compatibleVersions);
        versions.sort(VersionOrder.INSTANCE.reversed());
        List<ProtoSchema> ordered = new ArrayList<>();
        TreeSet<String> names = new TreeSet<>();
        for (String v : versions) {
            ProtoSchema schema = kept.get(v);
            if (schema != null) {
                ordered.add(schema);
                names.addAll(schema.services());
            }
        }
        this.newestFirst = List.copyOf(ordered);
        this.protoServices = Collections.unmodifiableSortedSet(names);
    }

    Map<String, ProtoSchema> byVersion() {
        return byVersion;
    }

    KeyPaths keys() {
        return keys;
    }

    SortedSet<String> protoServices() {
        return protoServices;
    }

    private <T> Optional<T> newest(Function<ProtoSchema, Optional<T>> lookup) {
        for (ProtoSchema s : newestFirst) {
            Optional<T> found = lookup.apply(s);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    Optional<FileDescriptor> fileContainingSymbol(String symbol) {
        return newest(s -> s.fileContainingSymbol(symbol));
    }

    Optional<FileDescriptor> file(String name) {
        return newest(s -> s.file(name));
    }

    Optional<MethodDescriptor> method(String service, String method) {
        return newest(s -> s.method(service, method));
    }

    Optional<ProtoSchema> forVersion(String version) {
        return Optional.ofNullable(byVersion.get(version));
    }

    /** The schema of the version {@code status}'s worker reported, when it answered (compatible or rejected). */
    Optional<ProtoSchema> forWorker(Optional<WorkerStatus> status) {
        return status.filter(st -> st.state() == WorkerStatus.State.COMPATIBLE
                        || st.state() == WorkerStatus.State.REJECTED)
                .flatMap(WorkerStatus::info).flatMap(info -> forVersion(info.version()));
    }

    Optional<String> keyPath(String service, String method) {
        return keys.path(service, method).map(p -> String.join(".", p));
    }

    String extractKey(String service, String method, byte[] request) {
        return KeyReader.extractKey(this, keys, service, method, request);
    }

    WorkerInfo route(InvocationTargets targets, String service, String method, Caller caller, String key) {
        java.util.Objects.requireNonNull(key, "key");
        return RendezvousHash.pick(targets.target(service, method, caller).workers(), key);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SchemaIndex s && s.byVersion.equals(byVersion) && s.keys.equals(keys);
    }

    @Override
    public int hashCode() {
        return byVersion.hashCode();
    }
}
