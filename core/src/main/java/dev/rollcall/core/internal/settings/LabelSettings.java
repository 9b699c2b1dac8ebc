package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.labels.LabelSelector;
import dev.rollcall.core.internal.catalog.CoreKeys;
import java.time.Duration;

/**
 * Which workers may be used at all and which are preferred, by their labels
 * ({@code rollcall.selector}, {@code rollcall.prefer-labels.*}), validated; defaults and bounds
 * are {@link CoreKeys}'.
 *
 * @param selector   every worker must match it before the policy sees it
 * @param prefer     the labels preferred; {@link LabelSelector#everything()} when none
 * @param minWorkers how many preferred workers must be compatible for the preference to apply
 * @param hold       how long the preferred ones must have been enough again before the preference
 *                   returns after a fall-back (the preference is left at once)
 */
public record LabelSettings(LabelSelector selector, LabelSelector prefer, int minWorkers, Duration hold) {

    /** Whether a preference is configured. */
    public boolean prefers() {
        return !prefer.isEmpty();
    }

    /**
     * The settings under {@code root} (values given to the builder are a layer of it).
     *
     * @throws ConfigurationException naming the key, the value, the position and what was expected
     */
    static LabelSettings read(Settings root) {
        return new LabelSettings(selector(root, CoreKeys.SELECTOR.name()), selector(root, CoreKeys.PREFER_LABELS.name()),
                root.get(CoreKeys.PREFER_MIN_WORKERS), root.get(CoreKeys.PREFER_HOLD));
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
