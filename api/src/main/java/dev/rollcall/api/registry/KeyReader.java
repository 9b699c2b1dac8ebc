package dev.rollcall.api.registry;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * Reads routing keys out of serialized requests, and checks key paths against schemas. Apart from
 * {@link SchemaIndex} because it needs protobuf to be loaded at all: a snapshot used only for
 * routing must work without protobuf on the class path.
 */
final class KeyReader {

    private KeyReader() {
    }

    static String extractKey(SchemaIndex index, KeyPaths keys, String service, String method, byte[] request) {
        String what = "the key of " + service + "/" + method;
        List<String> path = keys.path(service, method).orElseThrow(() -> new KeyExtractionException(
                KeyExtractionException.Reason.NO_KEY_CONFIGURED, service, method,
                what + " is not configured: set rollcall.keys." + service + "." + method + "=<field path>"));
        String written = String.join(".", path);
        MethodDescriptor m = index.method(service, method).orElseThrow(() -> new KeyExtractionException(
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

    /** See {@link KeyPaths#problems}. */
    static List<String> problems(java.util.Map<String, List<String>> byServiceMethod, ProtoSchema schema) {
        List<String> found = new ArrayList<>();
        new java.util.TreeMap<>(byServiceMethod).forEach((serviceMethod, path) -> {
            int dot = serviceMethod.lastIndexOf('.');
            String service = serviceMethod.substring(0, dot);
            String method = serviceMethod.substring(dot + 1);
            schema.method(service, method).ifPresent(m -> {
                try {
                    resolve(service, method, m.getInputType(), path);
                } catch (KeyExtractionException e) {
                    found.add(e.getMessage());
                }
            });
        });
        return found;
    }
}
