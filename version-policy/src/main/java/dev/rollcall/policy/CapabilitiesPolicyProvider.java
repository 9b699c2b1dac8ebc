package dev.rollcall.policy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.Settings;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;
import java.util.Optional;

/**
 * Creates a {@link CapabilitiesPolicy} for {@code rollcall.policy.type=capabilities}.
 *
 * <p>Keys, relative to {@code rollcall.policy.capabilities.}: {@code baseline} (required, requirements
 * separated by commas as a query writes them: {@code plan-protocol>=3, datafusion^55}) and
 * {@code range} (optional, an npm range as for {@code semver}; unset, any version will do).
 *
 * <p>Stateless and thread-safe. {@link #create} reads both keys before validating either, and throws
 * a {@link ConfigurationException} naming the full key and its value when the baseline is missing or
 * is not a list of requirements (naming the one at fault), or when the range is not npm range syntax
 * or can match no version.
 */
public final class CapabilitiesPolicyProvider implements VersionPolicyProvider {

    private static final String EXPECTED_BASELINE = "requirements separated by commas, such as"
            + " plan-protocol>=3 or plan-protocol>=3, udf:geo_distance";

    /** Needed by {@link java.util.ServiceLoader}. */
    public CapabilitiesPolicyProvider() {
    }

    @Override
    public String type() {
        return "capabilities";
    }

    @Override
    public VersionPolicy create(Settings settings) {
        String baselineKey = PolicyKeys.CAPABILITIES_BASELINE.name();
        String rangeKey = PolicyKeys.CAPABILITIES_RANGE.name();
        Optional<String> baselineText = settings.find(PolicyKeys.CAPABILITIES_BASELINE);
        Optional<String> range = settings.find(PolicyKeys.CAPABILITIES_RANGE);
        String text = baselineText.orElseThrow(() -> ConfigurationException.missing(baselineKey, EXPECTED_BASELINE));
        Requirements baseline;
        try {
            baseline = Requirements.parse(text);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(baselineKey, baselineKey + "="
                    + ConfigurationException.printable(baselineKey, text) + ": " + e.getMessage()
                    + "; expected " + EXPECTED_BASELINE, e);
        }
        if (range.isEmpty()) {
            return CapabilitiesPolicy.of(baseline);
        }
        return CapabilitiesPolicy.of(baseline, RangeSettings.compile(rangeKey, range.get(), range.get(), false,
                RangeSettings.EXPECTED_RANGE));
    }
}
