package dev.rollcall.api;

/**
 * Who may invoke a service or handler that a worker advertises.
 *
 * <p>A handler without its own visibility inherits its service's.
 *
 * <p>A worker newer than this coordinator may send a value this version does not know: it is read
 * as {@link #UNKNOWN}, which no caller may call. Neither {@link #INTERNAL} nor {@link #EXTERNAL} is
 * safe as the reading: each lets one kind of caller in, and the new value may mean that neither
 * may (the most restrictive reading fails closed).
 */
public enum Visibility {
    /** Callable from the ingress and from other services. */
    PUBLIC,
    /** Callable only from other services, never from the ingress. */
    INTERNAL,
    /** Callable only from the ingress. */
    EXTERNAL,
    /**
     * A value this version of Rollcall does not know, sent by a newer worker: callable by no one
     * until the coordinator is upgraded. Only ever read from the wire; a worker cannot declare it.
     */
    UNKNOWN
}
