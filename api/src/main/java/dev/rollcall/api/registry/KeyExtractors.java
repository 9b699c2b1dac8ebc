package dev.rollcall.api.registry;

import java.util.Optional;

/**
 * Read-only view: the routing key of a request, read from the field that
 * {@code rollcall.keys.<service>.<method>} names (see {@link KeyPaths}), with the schema of the
 * newest compatible version that defines the method (see {@link ProtoSymbols}).
 *
 * <p>Every method answers from one immutable snapshot; implementations are thread-safe and never
 * block. Needs {@code protobuf-java} on the class path (the resolver has it).
 */
public interface KeyExtractors {

    /** The configured key path of {@code method} of {@code service}, as written (e.g. {@code order.customer_id}). */
    Optional<String> keyPath(String service, String method);

    /**
     * The routing key of {@code request}, the serialized request message of {@code method} of
     * {@code service}. Strings are the key as they are; integers in decimal (unsigned ones
     * unsigned), booleans {@code true}/{@code false}, enums by value name, bytes in base64.
     *
     * @throws KeyExtractionException with its {@link KeyExtractionException#reason() reason}:
     *         {@code NO_KEY_CONFIGURED}, {@code UNKNOWN_METHOD} (no compatible schema defines it),
     *         {@code INVALID_KEY_PATH} (the path names no singular scalar field of the request),
     *         {@code UNPARSABLE_REQUEST}, or {@code KEY_MISSING} (the field, or a message on its
     *         path, is unset, or the value is empty)
     */
    String extractKey(String service, String method, byte[] request);
}
