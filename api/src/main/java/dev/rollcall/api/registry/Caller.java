package dev.rollcall.api.registry;

import dev.rollcall.api.Visibility;

/** Who asks for an invocation target: the ingress (from outside) or another service (inside). */
public enum Caller {
    /** A request that came through the ingress, from outside the fleet. */
    INGRESS,
    /** A call from another service inside the fleet. */
    INTERNAL;

    /**
     * Whether this caller may call something of the given visibility: {@code PUBLIC} lets both in,
     * {@code INTERNAL} only {@link #INTERNAL}, {@code EXTERNAL} only {@link #INGRESS},
     * {@code UNKNOWN} (a value from a newer worker) neither.
     */
    public boolean mayCall(Visibility visibility) {
        return switch (visibility) {
            case PUBLIC -> true;
            case INTERNAL -> this == INTERNAL;
            case EXTERNAL -> this == INGRESS;
            case UNKNOWN -> false;
        };
    }
}
