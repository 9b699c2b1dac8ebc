package dev.rollcall.example.policy;

import dev.rollcall.api.Settings;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;

/**
 * Makes {@link MajorityVersionPolicy} selectable as {@code rollcall.policy.type=majority}, through
 * this module's {@code META-INF/services} file. Key: {@code rollcall.policy.majority.min-workers}
 * (default 1).
 */
public final class MajorityVersionPolicyProvider implements VersionPolicyProvider {

    @Override
    public String type() {
        return "majority";
    }

    @Override
    public VersionPolicy create(Settings settings) {
        return new MajorityVersionPolicy(settings.integer("min-workers", 1, 1, 1_000_000));
    }
}
