package dev.rollcall.policy.planted;

import dev.rollcall.core.internal.LiveResolvers;

/** Planted for {@code ArchitectureTest}: a policy that reaches into the resolver's internals. */
public final class PolicyUsesCoreInternals {

    private PolicyUsesCoreInternals() {
    }

    static Object peek() {
        return LiveResolvers.class;
    }
}
