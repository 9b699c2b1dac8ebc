package dev.rollcall.core;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.core.internal.ProbeTls;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * How workers are probed ({@code rollcall.probe.*}), validated. The defaults are the constants
 * below and the table in core's README; {@link WorkerResolver.Builder} and {@link WorkerProbe}
 * read them from here only.
 */
record ProbeSettings(Duration timeout, int concurrency, Duration backoffInitial, Duration backoffMax,
                     Duration refreshInterval, boolean keepChannels, int maxResponseBytes, ProbeTls tls) {

    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);
    static final int DEFAULT_CONCURRENCY = 64;
    static final Duration DEFAULT_BACKOFF_INITIAL = Duration.ofMillis(250);
    static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(30);
    static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofMinutes(10);
    static final boolean DEFAULT_KEEP_CHANNELS = true;
    static final int DEFAULT_MAX_RESPONSE_BYTES = 1 << 20;
    static final int MIN_RESPONSE_BYTES = 1024;

    /**
     * The settings under {@code probe} (scoped to {@code rollcall.probe.}), where the builder's
     * values, when set, win over the configuration's.
     *
     * @throws ConfigurationException naming the key, the value and what was expected
     */
    static ProbeSettings read(Settings probe, WorkerResolver.Builder b) {
        Duration initial = or(b.backoffInitial, () -> probe.positiveDuration("backoff.initial", DEFAULT_BACKOFF_INITIAL));
        Duration max = or(b.backoffMax, () -> probe.positiveDuration("backoff.max", DEFAULT_BACKOFF_MAX));
        // The builder checks its own pair at once; only configured values can still disagree here.
        if (max.compareTo(initial) < 0) {
            throw ConfigurationException.invalid(probe.fullKey("backoff.max"), max.toString(),
                    "at least " + probe.fullKey("backoff.initial") + " (" + initial + ")");
        }
        return new ProbeSettings(
                or(b.probeTimeout, () -> probe.positiveDuration("timeout", DEFAULT_TIMEOUT)),
                or(b.probeConcurrency, () -> probe.integer("concurrency", DEFAULT_CONCURRENCY, 1, 100_000)),
                initial, max,
                or(b.refreshInterval, () -> probe.positiveDuration("refresh-interval", DEFAULT_REFRESH_INTERVAL)),
                or(b.keepChannels, () -> probe.bool("keep-channels", DEFAULT_KEEP_CHANNELS)),
                or(b.maxResponseBytes, () -> probe.integer("max-response-bytes", DEFAULT_MAX_RESPONSE_BYTES,
                        MIN_RESPONSE_BYTES, 64 << 20)),
                ProbeTls.read(probe, b.tlsCa, b.tlsCert, b.tlsKey, b.tlsAuthority));
    }

    private static <T> T or(T set, Supplier<T> configured) {
        return set != null ? set : configured.get();
    }
}
