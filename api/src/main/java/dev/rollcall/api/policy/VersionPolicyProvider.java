package dev.rollcall.api.policy;

import dev.rollcall.api.Settings;

/**
 * Creates a {@link VersionPolicy} of one {@link #type()}. Found by {@link java.util.ServiceLoader}:
 * list the implementation in {@code META-INF/services/dev.rollcall.api.policy.VersionPolicyProvider}.
 * Needs a public no-argument constructor.
 */
public interface VersionPolicyProvider {

    /** The name selected by {@code rollcall.policy.type}, e.g. {@code exact}, {@code semver}. */
    String type();

    /**
     * Creates the policy from its settings, scoped to {@code rollcall.policy.<type>.}. Reads and
     * validates every key it supports here.
     *
     * @throws dev.rollcall.api.ConfigurationException naming the bad key and value
     */
    VersionPolicy create(Settings settings);
}
