package dev.rollcall.policy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;
import java.math.BigDecimal;
import java.util.Optional;

/**
 * Creates a {@link RolloutPolicy} for {@code rollcall.policy.type=rollout}.
 *
 * <p>Keys, relative to {@code rollcall.policy.rollout.}: {@code range} (required, an npm range as for
 * {@code semver}), {@code include-prerelease} ({@code true} or {@code false}, default {@code false}),
 * {@code min-workers} (a whole number of at least 1) and {@code min-fraction} (a decimal number
 * greater than 0 and at most 1, such as {@code 0.6}); at least one of the last two must be set.
 *
 * <p>Stateless and thread-safe; each {@link #create} returns a new policy, which holds the state of
 * one resolver. {@link #create} reads every key before validating any, and throws a
 * {@link ConfigurationException} naming the full key and its value when a value is malformed or out
 * of range, when the range is missing or can match no version, or (naming both keys) when neither
 * threshold is set.
 */
public final class RolloutPolicyProvider implements VersionPolicyProvider {

    private static final String EXPECTED_FRACTION = "a fraction greater than 0 and at most 1, such as 0.6";

    /** Needed by {@link java.util.ServiceLoader}. */
    public RolloutPolicyProvider() {
    }

    @Override
    public String type() {
        return "rollout";
    }

    @Override
    public VersionPolicy create(Settings settings) {
        Optional<String> range = settings.raw("range");
        Optional<String> fraction = settings.raw("min-fraction");
        boolean minWorkersSet = settings.raw("min-workers").isPresent();
        boolean includePrerelease = settings.get(PolicyKeys.ROLLOUT_INCLUDE_PRERELEASE);
        int minWorkers = settings.find(PolicyKeys.ROLLOUT_MIN_WORKERS).orElse(0);

        String rangeKey = settings.fullKey("range");
        String minWorkersKey = settings.fullKey("min-workers");
        String fractionKey = settings.fullKey("min-fraction");
        BigDecimal minFraction = fraction.map(value -> parseFraction(fractionKey, value)).orElse(null);
        if (!minWorkersSet && minFraction == null) {
            throw new ConfigurationException(minWorkersKey, "neither " + minWorkersKey + " nor " + fractionKey
                    + " is set: expected a number of workers (such as 3) in " + minWorkersKey + ", "
                    + EXPECTED_FRACTION + " in " + fractionKey + ", or both");
        }
        String rangeText = range.orElseThrow(
                () -> ConfigurationException.missing(rangeKey, RangeSettings.EXPECTED_RANGE));
        SemverRangePolicy allowed = RangeSettings.compile(rangeKey, rangeText, rangeText, includePrerelease,
                RangeSettings.EXPECTED_RANGE);
        return RolloutPolicy.create(allowed, minWorkers, minFraction);
    }

    private static BigDecimal parseFraction(String key, String value) {
        BigDecimal parsed;
        try {
            parsed = new BigDecimal(value);
        } catch (NumberFormatException e) {
            throw ConfigurationException.invalid(key, value, EXPECTED_FRACTION);
        }
        if (parsed.signum() <= 0 || parsed.compareTo(BigDecimal.ONE) > 0) {
            throw ConfigurationException.invalid(key, value, EXPECTED_FRACTION);
        }
        return parsed;
    }
}
