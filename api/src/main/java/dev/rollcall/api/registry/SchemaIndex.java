package dev.rollcall.api.registry;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.rollcall.api.WorkerInfo;
import java.util.ArrayList;
import java.util.Base64;
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
     * @param compatible       the compatible workers
     */
    SchemaIndex(java.util.Set<String> answeredVersions, List<WorkerInfo> compatible, Map<String, ProtoSchema> schemas,
                KeyPaths keys) {
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
        java.util.Set<String> compatibleVersions = new java.util.HashSet<>();
        compatible.forEach(w -> compatibleVersions.add(w.version()));
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
        String what = "the key of " + service + "/" + method;
        List<String> path = keys.path(service, method).orElseThrow(() -> new KeyExtractionException(
                KeyExtractionException.Reason.NO_KEY_CONFIGURED, service, method,
                what + " is not configured: set rollcall.keys." + service + "." + method + "=<field path>"));
        String written = String.join(".", path);
        MethodDescriptor m = method(service, method).orElseThrow(() -> new KeyExtractionException(
                KeyExtractionException.Reason.UNKNOWN_METHOD, service, method,
                what + " cannot be read: no compatible worker's schema defines " + service + "/" + method));
        List<FieldDescriptor> fields = resolve(service, method, m.getInputType(), path);
        DynamicMessage message;
        try {
            message = DynamicMessage.parseFrom(m.getInputType(), request);
        } catch (InvalidProtocolBufferException e) {
            throw new KeyExtractionException(KeyExtractionException.Reason.UNPARSABLE_REQUEST, service, method,
                    what + " cannot be read: the request is not a " + m.getInputType().getFullName() + " ("
                            + e.getMessage() + ")");
        }
        com.google.protobuf.Message current = message;
        StringBuilder at = new StringBuilder();
        for (FieldDescriptor f : fields) {
            at.append(at.length() == 0 ? "" : ".").append(f.getName());
            if (!current.hasField(f)) {
                throw new KeyExtractionException(KeyExtractionException.Reason.KEY_MISSING, service, method,
                        what + " is missing: field " + at + " is not set (key path " + written + ")");
            }
            Object value = current.getField(f);
            if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                current = (com.google.protobuf.Message) value;
                continue;
            }
            String key = format(f, value);
            if (key.isEmpty()) {
                throw new KeyExtractionException(KeyExtractionException.Reason.KEY_MISSING, service, method,
                        what + " is missing: field " + at + " is empty (key path " + written + ")");
            }
            return key;
        }
        throw new IllegalStateException("unreachable: resolve() ends every path at a scalar");
    }

    /** The fields along {@code path}: messages, then one singular scalar. */
    static List<FieldDescriptor> resolve(String service, String method, Descriptor input, List<String> path) {
        List<FieldDescriptor> fields = new ArrayList<>();
        Descriptor type = input;
        String written = String.join(".", path);
        for (int i = 0; i < path.size(); i++) {
            String problem = null;
            FieldDescriptor f = type == null ? null : type.findFieldByName(path.get(i));
            boolean last = i == path.size() - 1;
            if (f == null) {
                problem = type == null ? "field '" + path.get(i - 1) + "' is a scalar, it has no field '"
                        + path.get(i) + "'" : type.getFullName() + " has no field '" + path.get(i) + "'";
            } else if (f.isRepeated()) {
                problem = "field '" + f.getName() + "' is repeated";
            } else if (last && f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                problem = "it ends at message field '" + f.getName() + "'; a key must be a scalar";
            }
            if (problem != null) {
                throw new KeyExtractionException(KeyExtractionException.Reason.INVALID_KEY_PATH, service, method,
                        "key path " + written + " (rollcall.keys." + service + "." + method + ") is invalid for "
                                + input.getFullName() + ": " + problem);
            }
            fields.add(f);
            type = f.getJavaType() == FieldDescriptor.JavaType.MESSAGE ? f.getMessageType() : null;
        }
        return fields;
    }

    private static String format(FieldDescriptor f, Object value) {
        return switch (f.getType()) {
            case UINT32, FIXED32 -> Integer.toUnsignedString((Integer) value);
            case UINT64, FIXED64 -> Long.toUnsignedString((Long) value);
            case ENUM -> ((com.google.protobuf.Descriptors.EnumValueDescriptor) value).getName();
            case BYTES -> ((ByteString) value).isEmpty() ? ""
                    : Base64.getEncoder().encodeToString(((ByteString) value).toByteArray());
            default -> String.valueOf(value);
        };
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
