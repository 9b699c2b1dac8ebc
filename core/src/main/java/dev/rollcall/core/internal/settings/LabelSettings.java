package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.labels.LabelSelector;
import java.time.Duration;

/**
 * Which workers may be used at all and which are preferred, by their labels
 * ({@code rollcall.selector}, {@code rollcall.prefer-labels.*}), validated. Defaults: no selector,
 * no preference, {@code min-workers} 1, {@code hold} 30 s.
 *
 * @param selector   every worker must match it before the policy sees it
 * @param prefer     the labels preferred; {@link LabelSelector#everything()} when none
 * @param minWorkers how many preferred workers must be compatible for the preference to apply
 * @param hold       how long the preferred ones must have been enough again before the preference
 *                   returns after a fall-back (the preference is left at once)
 */
public record LabelSettings(LabelSelector selector, LabelSelector prefer, int minWorkers, Duration hold) {

    static final Duration DEFAULT_HOLD = Duration.ofSeconds(30);

    /** Whether a preference is configured. */
    public boolean prefers() {
        return !prefer.isEmpty();
    }

    /**
     * The settings under {@code root}, where the overrides given in code, when set, win.
     *
     * @throws ConfigurationException naming the key, the value, the position and what was expected
     */
    static LabelSettings read(Settings root, ResolverOverrides given) {
        LabelSelector selector = selector(root, "rollcall.selector");
        LabelSelector prefer = selector(root, "rollcall.prefer-labels");
        int min = root.integer("rollcall.prefer-labels.min-workers", 1, 1, 1_000_000);
        Duration hold = root.duration("rollcall.prefer-labels.hold", DEFAULT_HOLD);
        if (hold.isNegative()) {
            throw ConfigurationException.invalid("rollcall.prefer-labels.hold", hold.toString(), "zero or more");
        }
        return new LabelSettings(given.selector() != null ? given.selector() : selector,
                given.preferLabels() != null ? given.preferLabels() : prefer,
                given.preferLabels() != null ? given.preferMinWorkers() : min, hold);
    }

    private static LabelSelector selector(Settings root, String key) {
        String text = root.raw(key).orElse("");
        try {
            return LabelSelector.parse(text);
        } catch (IllegalArgumentException e) {
            throw ConfigurationException.invalid(key, text, "a Kubernetes label selector such as "
                    + "env=prod,tier!=canary,zone in (eu-1,eu-2),!deprecated (" + e.getMessage() + ")");
        }
    }
}
