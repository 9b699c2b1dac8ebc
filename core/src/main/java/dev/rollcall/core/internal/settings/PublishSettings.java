package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import java.util.concurrent.TimeUnit;

/**
 * {@code rollcall.publish.*}: how often snapshots may be published, validated.
 *
 * @param maxRate {@code rollcall.publish.max-rate}: snapshots per second at most, from
 *                {@value #MIN_MAX_RATE} to {@value #MOST_MAX_RATE}; a change waits at most
 *                {@code 1 / maxRate} for its snapshot
 */
public record PublishSettings(int maxRate) {

    public static final String MAX_RATE_KEY = "rollcall.publish.max-rate";
    /**
     * A listener that replans on every snapshot (a coordinator, a {@code rollcall:} name resolver,
     * a console stream) does so at most this often, and news that takes a worker away waits at
     * most 50 ms, far below a probe's deadline.
     */
    public static final int DEFAULT_MAX_RATE = 20;
    static final int MIN_MAX_RATE = 1;
    /** Faster than a millisecond apart, the ceiling protects no listener. */
    static final int MOST_MAX_RATE = 1_000;

    public static final PublishSettings DEFAULTS = new PublishSettings(DEFAULT_MAX_RATE);

    public PublishSettings {
        if (maxRate < MIN_MAX_RATE || maxRate > MOST_MAX_RATE) {
            throw new IllegalArgumentException("publish max-rate " + maxRate + " is not from " + MIN_MAX_RATE
                    + " to " + MOST_MAX_RATE);
        }
    }

    /** The least time between the starts of two snapshot builds: {@code 1 / maxRate}. */
    public long intervalNanos() {
        return TimeUnit.SECONDS.toNanos(1) / maxRate;
    }

    /**
     * The settings of {@code root}.
     *
     * @throws ConfigurationException naming the key and the value: no whole number from
     *                                {@value #MIN_MAX_RATE} to {@value #MOST_MAX_RATE}
     */
    public static PublishSettings read(Settings root) {
        return new PublishSettings(root.integer(MAX_RATE_KEY, DEFAULT_MAX_RATE, MIN_MAX_RATE, MOST_MAX_RATE));
    }
}
