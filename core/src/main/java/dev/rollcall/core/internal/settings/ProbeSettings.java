package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.core.internal.ProbeTls;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * How workers are probed ({@code rollcall.probe.*}), validated. The defaults are the constants
 * below and the table in core's README; the resolver and {@code WorkerProbe} read them from here only.
 *
 * @param maxKeptChannels {@code max-kept-channels}: how many workers hold a kept channel (and its
 *                        stream) at once; the others are tracked as without kept channels. Unused
 *                        when {@code keepChannels} is false. Default {@link KeptChannelCap#derived()}.
 */
public record ProbeSettings(Duration timeout, int concurrency, Duration backoffInitial, Duration backoffMax,
                     Duration refreshInterval, boolean keepChannels, int maxResponseBytes, ProbeTls tls,
                     Duration keepaliveTime, Duration keepaliveTimeout, int maxKeptChannels) {

    public static final String MAX_KEPT_CHANNELS_KEY = "rollcall.probe.max-kept-channels";
    static final int MOST_KEPT_CHANNELS = 10_000_000;

    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);
    static final int DEFAULT_CONCURRENCY = 64;
    static final Duration DEFAULT_BACKOFF_INITIAL = Duration.ofMillis(250);
    static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(30);
    static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofMinutes(10);
    static final boolean DEFAULT_KEEP_CHANNELS = true;
    public static final int DEFAULT_MAX_RESPONSE_BYTES = 1 << 20;
    public static final int MIN_RESPONSE_BYTES = 1024;
    static final Duration DEFAULT_KEEPALIVE_TIME = Duration.ofSeconds(5);
    static final Duration DEFAULT_KEEPALIVE_TIMEOUT = Duration.ofSeconds(3);
    /** Workers grant heartbeats of 1 s at least: asking for less only makes the bound a lie. */
    static final Duration MIN_KEEPALIVE_TIME = Duration.ofSeconds(1);
    /** Shorter than this, a GC pause or a busy event loop on either side looks like a dead host. */
    static final Duration MIN_KEEPALIVE_TIMEOUT = Duration.ofMillis(100);
    /** grpc-java clamps HTTP/2 client keepalive to 10 s at least: the second layer never pings sooner. */
    static final Duration MIN_HTTP2_KEEPALIVE_TIME = Duration.ofSeconds(10);

    /** The settings of the tests and of code that needs no keepalive choice: the defaults for both. */
    public ProbeSettings(Duration timeout, int concurrency, Duration backoffInitial, Duration backoffMax,
                  Duration refreshInterval, boolean keepChannels, int maxResponseBytes, ProbeTls tls) {
        this(timeout, concurrency, backoffInitial, backoffMax, refreshInterval, keepChannels, maxResponseBytes, tls,
                DEFAULT_KEEPALIVE_TIME, DEFAULT_KEEPALIVE_TIMEOUT);
    }

    /** As the canonical constructor, with the derived kept-channel cap. */
    public ProbeSettings(Duration timeout, int concurrency, Duration backoffInitial, Duration backoffMax,
                  Duration refreshInterval, boolean keepChannels, int maxResponseBytes, ProbeTls tls,
                  Duration keepaliveTime, Duration keepaliveTimeout) {
        this(timeout, concurrency, backoffInitial, backoffMax, refreshInterval, keepChannels, maxResponseBytes, tls,
                keepaliveTime, keepaliveTimeout, KeptChannelCap.derived());
    }

    /** These settings with at most {@code max} kept channels. */
    public ProbeSettings withMaxKeptChannels(int max) {
        return new ProbeSettings(timeout, concurrency, backoffInitial, backoffMax, refreshInterval, keepChannels,
                maxResponseBytes, tls, keepaliveTime, keepaliveTimeout, max);
    }

    /**
     * How long a {@code WatchWorkerInfo} stream whose worker repeats its answer every
     * {@code grantedMillis} may stay silent before its worker counts as gone: the longer of the
     * grant and {@code keepalive-time} (a worker may grant more than asked), plus {@code keepalive-timeout}.
     */
    public long silenceLimitNanos(long grantedMillis) {
        return Math.max(TimeUnit.MILLISECONDS.toNanos(grantedMillis), keepaliveTime.toNanos())
                + keepaliveTimeout.toNanos();
    }

    /**
     * How often silent streams are looked for: a third of {@code keepalive-timeout}, between 100 ms
     * and 1 s. A stream is found silent at most this long after its limit.
     */
    public long sweepNanos() {
        long third = keepaliveTimeout.toNanos() / 3;
        return Math.max(TimeUnit.MILLISECONDS.toNanos(100),
                Math.min(TimeUnit.SECONDS.toNanos(1), third));
    }

    /** The HTTP/2 keepalive time of kept probe channels: {@code keepalive-time}, but 10 s at least. */
    public Duration http2KeepaliveTime() {
        return keepaliveTime.compareTo(MIN_HTTP2_KEEPALIVE_TIME) < 0 ? MIN_HTTP2_KEEPALIVE_TIME : keepaliveTime;
    }

    /**
     * The settings under {@code probe} (scoped to {@code rollcall.probe.}), where the overrides
     * given in code, when set, win over the configuration's.
     *
     * @throws ConfigurationException naming the key, the value and what was expected
     */
    static ProbeSettings read(Settings probe, ResolverOverrides given) {
        Duration initial = or(given.backoffInitial(), () -> probe.positiveDuration("backoff.initial", DEFAULT_BACKOFF_INITIAL));
        Duration max = or(given.backoffMax(), () -> probe.positiveDuration("backoff.max", DEFAULT_BACKOFF_MAX));
        // The builder checks its own pair at once; only configured values can still disagree here.
        if (max.compareTo(initial) < 0) {
            throw ConfigurationException.invalid(probe.fullKey("backoff.max"), max.toString(),
                    "at least " + probe.fullKey("backoff.initial") + " (" + initial + ")");
        }
        boolean keep = or(given.keepChannels(), () -> probe.bool("keep-channels", DEFAULT_KEEP_CHANNELS));
        int maxKept = or(given.maxKeptChannels(), () -> probe.integer("max-kept-channels", KeptChannelCap.derived(),
                0, MOST_KEPT_CHANNELS));
        if (keep && maxKept == 0) {
            // Zero kept channels is keep-channels=false said the wrong way: say which key means it.
            throw ConfigurationException.invalid(probe.fullKey("max-kept-channels"), "0", "a whole number from 1 to "
                    + MOST_KEPT_CHANNELS + " while " + probe.fullKey("keep-channels") + " is true (to keep no"
                    + " channels, set " + probe.fullKey("keep-channels") + "=false)");
        }
        return new ProbeSettings(
                or(given.probeTimeout(), () -> probe.positiveDuration("timeout", DEFAULT_TIMEOUT)),
                or(given.probeConcurrency(), () -> probe.integer("concurrency", DEFAULT_CONCURRENCY, 1, 100_000)),
                initial, max,
                or(given.refreshInterval(), () -> probe.positiveDuration("refresh-interval", DEFAULT_REFRESH_INTERVAL)),
                keep,
                or(given.maxResponseBytes(), () -> probe.integer("max-response-bytes", DEFAULT_MAX_RESPONSE_BYTES,
                        MIN_RESPONSE_BYTES, 64 << 20)),
                ProbeTls.read(probe, given.tlsCa(), given.tlsCert(), given.tlsKey(), given.tlsAuthority()),
                or(given.keepaliveTime(), () -> atLeast(probe, "keepalive-time", DEFAULT_KEEPALIVE_TIME,
                        MIN_KEEPALIVE_TIME, "1s")),
                or(given.keepaliveTimeout(), () -> atLeast(probe, "keepalive-timeout", DEFAULT_KEEPALIVE_TIMEOUT,
                        MIN_KEEPALIVE_TIMEOUT, "100ms")),
                maxKept);
    }

    private static Duration atLeast(Settings probe, String key, Duration defaultValue, Duration min, String shown) {
        Duration d = probe.duration(key, defaultValue);
        if (d.compareTo(min) < 0) {
            throw ConfigurationException.invalid(probe.fullKey(key), probe.raw(key).orElse(d.toString()),
                    "a duration of " + shown + " or more");
        }
        return d;
    }

    private static <T> T or(T set, Supplier<T> configured) {
        return set != null ? set : configured.get();
    }
}
