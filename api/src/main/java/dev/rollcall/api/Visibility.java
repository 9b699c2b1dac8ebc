package dev.rollcall.api;

/**
 * Who may invoke a service or handler that a worker advertises.
 *
 * <p>A handler without its own visibility inherits its service's.
 */
public enum Visibility {
    /** Callable from the ingress and from other services. */
    PUBLIC,
    /** Callable only from other services, never from the ingress. */
    INTERNAL,
    /** Callable only from the ingress. */
    EXTERNAL
}
