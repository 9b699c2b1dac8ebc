package dev.rollcall.policy.planted;

import dev.rollcall.api.registry.InternalSnapshots;
import dev.rollcall.core.internal.LiveResolvers;
import java.util.List;

/** Planted for {@code ArchitectureTest}: a policy that reaches into the resolver's internals. */
public final class PolicyUsesCoreInternals {

    private PolicyUsesCoreInternals() {
    }

    static Object peek() {
        return List.of(LiveResolvers.class, InternalSnapshots.class);
    }
}
