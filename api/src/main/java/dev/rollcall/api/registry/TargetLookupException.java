package dev.rollcall.api.registry;

import java.util.Objects;

/**
 * An invocation target cannot be used by the caller that asked for it. The {@link #reason()} tells
 * the four cases apart (an ingress maps them to different answers: not found, forbidden,
 * unavailable); the message names the service and handler.
 */
public final class TargetLookupException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why a target cannot be used. */
    public enum Reason {
        /** No worker in the snapshot offers this service and handler. */
        NOT_FOUND,
        /**
         * The target is internal-only and the ingress asked for it; or its visibility is
         * {@link dev.rollcall.api.Visibility#UNKNOWN UNKNOWN} and no caller may call it.
         */
        NOT_PUBLIC,
        /**
         * The target is external-only (ingress only) and another service asked for it; or its
         * visibility is {@link dev.rollcall.api.Visibility#UNKNOWN UNKNOWN} and no caller may call it.
         */
        NOT_INTERNAL,
        /** Only workers the policy rejects, or that do not answer, offer it. */
        NO_COMPATIBLE_WORKER
    }

    private final Reason reason;
    private final String service;
    private final String handler;
    private final Caller caller;

    public TargetLookupException(Reason reason, String service, String handler, Caller caller, String message) {
        super(message);
        this.reason = Objects.requireNonNull(reason, "reason");
        this.service = Objects.requireNonNull(service, "service");
        this.handler = Objects.requireNonNull(handler, "handler");
        this.caller = Objects.requireNonNull(caller, "caller");
    }

    public Reason reason() {
        return reason;
    }

    public String service() {
        return service;
    }

    public String handler() {
        return handler;
    }

    public Caller caller() {
        return caller;
    }
}
