package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.core.internal.ProbeTls;
import dev.rollcall.core.internal.catalog.CoreKeys;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How workers are probed ({@code rollcall.probe.*}), validated. Names, defaults and bounds are
 * {@link CoreKeys}'; the resolver and {@code WorkerProbe} read them from here only.
 *
 * @param maxKeptChannels {@code max-kept-channels}: how many workers hold a kept channel (and its
 *                        stream) at once; the others are tracked as without kept channels. Unused
 *                        when {@code keepChannels} is false. Default {@link KeptChannelCap#derived()}.
 */
public record ProbeSettings(Duration timeout, int concurrency, Duration backoffInitial, Duration backoffMax,
                     Duration refreshInterval, boolean keepChannels, int maxResponseBytes, ProbeTls tls,
                     Duration keepaliveTime, Duration keepaliveTimeout, int maxKeptChannels) {

    public static final String MAX_KEPT_CHANNELS_KEY = CoreKeys.MAX_KEPT_CHANNELS.name();

    /** grpc-java clamps HTTP/2 client keepalive to 10 s at least: the second layer never pings sooner. */
    static final Duration MIN_HTTP2_KEEPALIVE_TIME = Duration.ofSeconds(10);

    /** The settings of the tests and of code that needs no keepalive choice: the defaults for both. */
    public ProbeSettings(Duration timeout, int concurrency, Duration backoffInitial, Duration backoffMax,
                  Duration refreshInterval, boolean keepChannels, int maxResponseBytes, ProbeTls tls) {
        this(timeout, concurrency, backoffInitial, backoffMax, refreshInterval, keepChannels, maxResponseBytes, tls,
                CoreKeys.KEEPALIVE_TIME.defaultValue(), CoreKeys.KEEPALIVE_TIMEOUT.defaultValue());
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
     * The settings under {@code probe} (scoped to {@code rollcall.probe.}); values given to the
     * builder are a layer of the same configuration.
     *
     * @throws ConfigurationException naming the key, the value and what was expected
     */
    static ProbeSettings read(Settings probe) {
        Duration initial = probe.get(CoreKeys.BACKOFF_INITIAL);
        Duration max = probe.get(CoreKeys.BACKOFF_MAX);
        if (max.compareTo(initial) < 0) {
            throw ConfigurationException.invalid(CoreKeys.BACKOFF_MAX.name(), probe.raw("backoff.max")
                    .orElse(max.toString()), "at least " + CoreKeys.BACKOFF_INITIAL.name() + " (" + initial + ")");
        }
        boolean keep = probe.get(CoreKeys.KEEP_CHANNELS);
        int maxKept = probe.find(CoreKeys.MAX_KEPT_CHANNELS).orElseGet(KeptChannelCap::derived);
        if (keep && maxKept == 0) {
            // Zero kept channels is keep-channels=false said the wrong way: say which key means it.
            throw ConfigurationException.invalid(MAX_KEPT_CHANNELS_KEY, "0", "a whole number from 1 to "
                    + CoreKeys.MAX_KEPT_CHANNELS.max() + " while " + CoreKeys.KEEP_CHANNELS.name() + " is true (to keep no"
                    + " channels, set " + CoreKeys.KEEP_CHANNELS.name() + "=false)");
        }
        return new ProbeSettings(probe.get(CoreKeys.PROBE_TIMEOUT), probe.get(CoreKeys.PROBE_CONCURRENCY),
                initial, max, probe.get(CoreKeys.REFRESH_INTERVAL), keep, probe.get(CoreKeys.MAX_RESPONSE_BYTES),
                ProbeTls.read(probe, null, null, null, null), probe.get(CoreKeys.KEEPALIVE_TIME),
                probe.get(CoreKeys.KEEPALIVE_TIMEOUT), maxKept);
    }
}
