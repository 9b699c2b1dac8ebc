package dev.rollcall.policy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;

/**
 * Creates a {@link SemverRangePolicy} for {@code rollcall.policy.type=semver}.
 *
 * <p>Keys, relative to {@code rollcall.policy.semver.}: {@code range} (required, an npm range such
 * as {@code ^1.4.0}) and {@code include-prerelease} ({@code true} or {@code false}, default
 * {@code false}).
 *
 * <p>Stateless and thread-safe. {@link #create} reads both keys before validating either, and
 * throws a {@link ConfigurationException} naming the full key and its value when the range is
 * missing, is not npm range syntax, or can match no version, or when {@code include-prerelease} is
 * not a boolean.
 */
public final class SemverRangePolicyProvider implements VersionPolicyProvider {

    private static final String EXPECTED_RANGE =
            "an npm range such as ^1.4.0, ~1.4.2, >=1.2.0 <2.0.0, 1.x, 1.2.3 - 1.4 or ^1.4 || ^2";

    /** Needed by {@link java.util.ServiceLoader}. */
    public SemverRangePolicyProvider() {
    }

    @Override
    public String type() {
        return "semver";
    }

    @Override
    public VersionPolicy create(Settings settings) {
        boolean includePrerelease = settings.get(PolicyKeys.SEMVER_INCLUDE_PRERELEASE);
        String rangeKey = settings.fullKey("range");
        String range = settings.raw("range")
                .orElseThrow(() -> ConfigurationException.missing(rangeKey, EXPECTED_RANGE));
        try {
            return SemverRangePolicy.create(range, includePrerelease);
        } catch (InvalidRangeException e) {
            throw new ConfigurationException(rangeKey, rangeKey + "=" + ConfigurationException.printable(rangeKey, range)
                    + ": " + e.getMessage() + "; expected " + EXPECTED_RANGE, e);
        }
    }
}
