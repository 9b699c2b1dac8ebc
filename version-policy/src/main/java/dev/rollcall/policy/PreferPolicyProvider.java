package dev.rollcall.policy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;
import java.util.ArrayList;
import java.util.List;

/**
 * Creates a {@link PreferPolicy} for {@code rollcall.policy.type=prefer}.
 *
 * <p>Keys, relative to {@code rollcall.policy.prefer.}: {@code ranges} (required, a comma-separated
 * list of npm ranges, most preferred first, such as {@code ^2.1, ^2.0}; empty elements are ignored),
 * {@code min-workers} (how many workers must match a range for it to be used, a whole number of at
 * least 1, default 1) and {@code include-prerelease} ({@code true} or {@code false}, default
 * {@code false}, for every range).
 *
 * <p>Stateless and thread-safe. {@link #create} reads every key before validating any, and throws a
 * {@link ConfigurationException} naming the full key and its value when {@code ranges} is missing
 * or lists nothing, when one of its elements is not an npm range or can match no version (the
 * message quotes that element), or when another key is malformed.
 */
public final class PreferPolicyProvider implements VersionPolicyProvider {

    private static final String EXPECTED_RANGES =
            "a comma-separated list of npm ranges, most preferred first, such as ^2.1, ^2.0";

    /** Needed by {@link java.util.ServiceLoader}. */
    public PreferPolicyProvider() {
    }

    @Override
    public String type() {
        return "prefer";
    }

    @Override
    public VersionPolicy create(Settings settings) {
        String rangesKey = settings.fullKey("ranges");
        String value = settings.raw("ranges").orElse(null);
        settings.raw("min-workers"); // read before anything can throw, so that every key counts as known
        boolean includePrerelease = settings.get(PolicyKeys.PREFER_INCLUDE_PRERELEASE);
        int minWorkers = settings.get(PolicyKeys.PREFER_MIN_WORKERS);
        if (value == null) {
            throw ConfigurationException.missing(rangesKey, EXPECTED_RANGES);
        }
        List<String> elements = settings.list("ranges");
        if (elements.isEmpty()) {
            throw ConfigurationException.invalid(rangesKey, value, EXPECTED_RANGES);
        }
        List<SemverRangePolicy> ranges = new ArrayList<>(elements.size());
        for (String element : elements) {
            ranges.add(RangeSettings.compile(rangesKey, value, element, includePrerelease, EXPECTED_RANGES));
        }
        return PreferPolicy.create(ranges, minWorkers, includePrerelease);
    }
}
