package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.core.internal.catalog.CoreKeys;
import java.util.concurrent.TimeUnit;

/**
 * {@code rollcall.publish.*}: how often snapshots may be published, validated.
 *
 * @param maxRate {@code rollcall.publish.max-rate}: snapshots per second at most, from
 *                1 to 1,000; a change waits at most
 *                {@code 1 / maxRate} for its snapshot
 */
public record PublishSettings(int maxRate) {

    public static final String MAX_RATE_KEY = CoreKeys.PUBLISH_MAX_RATE.name();

    public static final PublishSettings DEFAULTS = new PublishSettings(CoreKeys.PUBLISH_MAX_RATE.defaultValue());

    public PublishSettings {
        CoreKeys.PUBLISH_MAX_RATE.check(maxRate, "PublishSettings");
    }

    /** The least time between the starts of two snapshot builds: {@code 1 / maxRate}. */
    public long intervalNanos() {
        return TimeUnit.SECONDS.toNanos(1) / maxRate;
    }

    /**
     * The settings of {@code root}.
     *
     * @throws ConfigurationException naming the key and the value: no whole number from
     *                                1 to 1,000
     */
    public static PublishSettings read(Settings root) {
        return new PublishSettings(root.get(CoreKeys.PUBLISH_MAX_RATE));
    }
}
