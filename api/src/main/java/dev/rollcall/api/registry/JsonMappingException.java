package dev.rollcall.api.registry;

import java.util.Objects;

/**
 * JSON and a method's message do not map onto each other. The message names the service, the
 * method and the {@link #fieldPath()} at fault; the {@link #reason()} tells the cases apart.
 */
public final class JsonMappingException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why the mapping failed. */
    public enum Reason {
        /** No compatible worker's schema defines this service and method. */
        UNKNOWN_METHOD,
        /** The text is not JSON, or not a JSON object. */
        MALFORMED_JSON,
        /** A field is unknown, or its value has the wrong type or range: see {@link #fieldPath()}. */
        BAD_FIELD,
        /** The bytes are not a message of the method's type. */
        UNPARSABLE_MESSAGE
    }

    private final Reason reason;
    private final String service;
    private final String method;
    private final String fieldPath;

    public JsonMappingException(Reason reason, String service, String method, String fieldPath, String message,
                                Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
        this.service = Objects.requireNonNull(service, "service");
        this.method = Objects.requireNonNull(method, "method");
        this.fieldPath = Objects.requireNonNull(fieldPath, "fieldPath");
    }

    public Reason reason() {
        return reason;
    }

    public String service() {
        return service;
    }

    public String method() {
        return method;
    }

    /** The path of the field at fault, e.g. {@code order.items[2].quantity}; {@code ""} for the whole message. */
    public String fieldPath() {
        return fieldPath;
    }
}
