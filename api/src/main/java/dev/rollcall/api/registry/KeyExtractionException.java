package dev.rollcall.api.registry;

import java.util.Objects;

/**
 * A request's routing key cannot be read. The {@link #reason()} tells the cases apart; the message
 * names the service, the method and, where there is one, the field path. Never carries the
 * request's contents.
 */
public final class KeyExtractionException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why a key cannot be read. */
    public enum Reason {
        /** No {@code rollcall.keys.<service>.<method>} is configured for this method. */
        NO_KEY_CONFIGURED,
        /** No compatible worker's schema defines this service and method. */
        UNKNOWN_METHOD,
        /** The configured path does not name a singular scalar field of the request message. */
        INVALID_KEY_PATH,
        /** The bytes are not a request message of this method. */
        UNPARSABLE_REQUEST,
        /** The key field, or a message on its path, is unset, or its value is empty. */
        KEY_MISSING
    }

    private final Reason reason;
    private final String service;
    private final String method;

    public KeyExtractionException(Reason reason, String service, String method, String message) {
        super(message);
        this.reason = Objects.requireNonNull(reason, "reason");
        this.service = Objects.requireNonNull(service, "service");
        this.method = Objects.requireNonNull(method, "method");
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
}
