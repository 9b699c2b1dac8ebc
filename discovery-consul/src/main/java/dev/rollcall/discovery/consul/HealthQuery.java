package dev.rollcall.discovery.consul;

import com.ecwid.consul.UrlParameters;
import com.ecwid.consul.v1.QueryParams;
import com.ecwid.consul.v1.health.HealthServicesRequest;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the discovery asks Consul: one service's health entries, filtered, as a blocking query.
 * Immutable.
 *
 * @param passingOnly  only instances whose every check passes ({@code ?passing})
 * @param tags         every one of them must be on the instance ({@code tag=}, repeated)
 * @param nodeMeta     node meta the instance's node must have ({@code node-meta=k:v}, repeated)
 * @param datacenter   the datacenter to ask about ({@code dc=}); null for the agent's own
 * @param waitTime       how long one blocking query may wait ({@code wait=}); whole seconds
 * @param backoffInitial the first retry delay after a failure or a query that did not block
 * @param backoffMax     the longest retry delay
 * @param rateLimitInterval under sustained churn, one query per this interval ({@link QueryRateLimit}); zero: none
 * @param rateLimitBurst    how many queries may go at once before the interval applies
 * @param filter         a Consul filter expression ({@code filter=}); null for none
 * @param consistency    the read consistency mode
 * @param keepaliveTime  while a query is under way, how often the agent is asked for a sign of life
 */
record HealthQuery(boolean passingOnly, List<String> tags, Map<String, String> nodeMeta, String datacenter,
                   Duration waitTime, Duration backoffInitial, Duration backoffMax,
                   Duration rateLimitInterval, int rateLimitBurst, String filter, Consistency consistency,
                   Duration keepaliveTime) {

    /** Consul's read consistency modes; {@code stale} spreads reads over every server. */
    enum Consistency {
        DEFAULT, STALE, CONSISTENT;

        static Optional<Consistency> parse(String text) {
            for (Consistency c : values()) {
                if (c.name().equalsIgnoreCase(text.strip())) {
                    return Optional.of(c);
                }
            }
            return Optional.empty();
        }
    }

    static final String PASSING_ONLY = "passing-only";
    static final String TAG = "tag";
    static final String NODE_META = "node-meta";
    static final String DATACENTER = "datacenter";
    static final String WAIT = "wait";
    static final String BACKOFF_INITIAL = "backoff.initial";
    static final String BACKOFF_MAX = "backoff.max";
    static final String RATE_LIMIT_INTERVAL = "rate-limit.interval";
    static final String RATE_LIMIT_BURST = "rate-limit.burst";
    static final String FILTER = "filter";
    static final String CONSISTENCY = "consistency";
    static final String KEEPALIVE_TIME = "keepalive-time";

    /** Consul's own default; it caps {@code wait} at 10 minutes. */
    static final Duration DEFAULT_WAIT = Duration.ofMinutes(5);
    static final Duration MAX_WAIT = Duration.ofMinutes(10);
    static final Duration DEFAULT_BACKOFF_INITIAL = Duration.ofSeconds(1);
    static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(30);
    /** Consul's docs: a token bucket of burst 2, degrading to polling about every 15 s under churn. */
    static final Duration DEFAULT_RATE_LIMIT_INTERVAL = Duration.ofSeconds(15);
    static final int DEFAULT_RATE_LIMIT_BURST = 2;
    /**
     * A blocking query is silent for up to {@code wait} by design, so silence alone tells nothing:
     * every this long the agent is asked {@code /v1/status/leader}, and one unanswered within
     * {@code request-timeout} means it is hung or cut off.
     */
    static final Duration DEFAULT_KEEPALIVE_TIME = Duration.ofSeconds(5);
    static final Duration MIN_KEEPALIVE_TIME = Duration.ofMillis(100);

    HealthQuery {
        tags = List.copyOf(tags);
        nodeMeta = Map.copyOf(nodeMeta);
    }

    /** Reads the discovery-only keys; {@link ConsulSettings#read} reads the shared ones. */
    static HealthQuery read(Settings settings) {
        for (String k : new String[] {PASSING_ONLY, TAG, NODE_META, DATACENTER, WAIT, BACKOFF_INITIAL, BACKOFF_MAX,
                RATE_LIMIT_INTERVAL, RATE_LIMIT_BURST, FILTER, CONSISTENCY, KEEPALIVE_TIME}) {
            settings.raw(k);    // all read before any is judged
        }
        boolean passingOnly = settings.bool(PASSING_ONLY, true);
        List<String> tags = settings.list(TAG);
        List<String> metaItems = settings.list(NODE_META);
        Optional<String> datacenter = settings.raw(DATACENTER);
        Duration wait = settings.positiveDuration(WAIT, DEFAULT_WAIT);
        Duration initial = settings.positiveDuration(BACKOFF_INITIAL, DEFAULT_BACKOFF_INITIAL);
        Duration max = settings.positiveDuration(BACKOFF_MAX, DEFAULT_BACKOFF_MAX);
        Duration rateInterval = settings.duration(RATE_LIMIT_INTERVAL, DEFAULT_RATE_LIMIT_INTERVAL);
        int rateBurst = settings.integer(RATE_LIMIT_BURST, DEFAULT_RATE_LIMIT_BURST, 1, 100);
        Optional<String> filter = settings.raw(FILTER);
        Optional<String> consistencyText = settings.raw(CONSISTENCY);
        Duration keepalive = settings.positiveDuration(KEEPALIVE_TIME, DEFAULT_KEEPALIVE_TIME);
        if (keepalive.compareTo(MIN_KEEPALIVE_TIME) < 0) {
            throw ConfigurationException.invalid(settings.fullKey(KEEPALIVE_TIME),
                    settings.raw(KEEPALIVE_TIME).orElse(keepalive.toString()), "a duration of at least 100ms");
        }
        filter.ifPresent(f -> {
            if (f.isBlank() || f.chars().anyMatch(Character::isISOControl)) {
                throw ConfigurationException.invalid(settings.fullKey(FILTER), f,
                        "a Consul filter expression on one line, e.g. Service.Meta.zone == \"eu-1\"");
            }
        });
        Consistency consistency = consistencyText.map(c -> Consistency.parse(c).orElseThrow(() ->
                ConfigurationException.invalid(settings.fullKey(CONSISTENCY), c, "stale, default or consistent")))
                .orElse(Consistency.DEFAULT);

        for (String tag : tags) {
            if (tag.chars().anyMatch(Character::isISOControl)) {
                throw ConfigurationException.invalid(settings.fullKey(TAG), tag, "tags without control characters");
            }
        }
        Map<String, String> nodeMeta = new LinkedHashMap<>();
        for (String item : metaItems) {
            int colon = item.indexOf(':');
            if (colon <= 0) {
                throw ConfigurationException.invalid(settings.fullKey(NODE_META), item,
                        "comma-separated key:value pairs such as zone:eu-1,rack:r7");
            }
            nodeMeta.put(item.substring(0, colon).strip(), item.substring(colon + 1).strip());
        }
        datacenter.ifPresent(dc -> ConsulSettings.checkName(settings.fullKey(DATACENTER), dc, "a datacenter name"));
        if (wait.compareTo(Duration.ofSeconds(1)) < 0 || wait.compareTo(MAX_WAIT) > 0 || wait.toNanosPart() != 0) {
            throw ConfigurationException.invalid(settings.fullKey(WAIT), settings.raw(WAIT).orElse(wait.toString()),
                    "whole seconds from 1s to 10m (Consul's limit)");
        }
        if (initial.compareTo(max) > 0) {
            throw ConfigurationException.invalid(settings.fullKey(BACKOFF_INITIAL),
                    settings.raw(BACKOFF_INITIAL).orElse(initial.toString()),
                    "at most " + settings.fullKey(BACKOFF_MAX) + " (" + max + ")");
        }
        if (rateInterval.isNegative() || rateInterval.compareTo(MAX_WAIT) > 0) {
            throw ConfigurationException.invalid(settings.fullKey(RATE_LIMIT_INTERVAL),
                    settings.raw(RATE_LIMIT_INTERVAL).orElse(rateInterval.toString()),
                    "a duration from 0s (no limit) to 10m; Consul suggests about 15s");
        }
        return new HealthQuery(passingOnly, tags, nodeMeta, datacenter.orElse(null), wait, initial, max,
                rateInterval, rateBurst, filter.map(String::strip).orElse(null), consistency, keepalive);
    }

    /**
     * The query's URL parameters. {@code index} 0 asks without blocking (the first query, and after
     * a reset). consul-api does not escape tags and node meta, so they are escaped here.
     */
    List<UrlParameters> parameters(long index) {
        return parameters(index, waitTime);
    }

    /** As {@link #parameters(long)}, blocking for at most {@code wait} (whole seconds) instead of the configured wait. */
    List<UrlParameters> parameters(long index, Duration wait) {
        HealthServicesRequest.Builder b = HealthServicesRequest.newBuilder()
                .setPassing(passingOnly)
                .setDatacenter(datacenter);
        if (!tags.isEmpty()) {
            b.setTags(tags.stream().map(HealthQuery::escape).toArray(String[]::new));
        }
        if (!nodeMeta.isEmpty()) {
            Map<String, String> escaped = new LinkedHashMap<>();
            nodeMeta.forEach((k, v) -> escaped.put(escape(k), escape(v)));
            b.setNodeMeta(escaped);
        }
        b.setQueryParams(index == 0 ? QueryParams.DEFAULT : new QueryParams(wait.toSeconds(), index));
        List<UrlParameters> parameters = new ArrayList<>(b.build().asUrlParameters());
        if (filter != null) {
            parameters.add(() -> List.of("filter=" + escape(filter)));
        }
        switch (consistency) {
            case STALE -> parameters.add(() -> List.of("stale"));
            case CONSISTENT -> parameters.add(() -> List.of("consistent"));
            default -> { }
        }
        return parameters;
    }

    /** The HTTP read timeout for a blocking query: Consul may hold it for {@code wait + wait/16}. */
    Duration readTimeout(Duration margin) {
        return waitTime.plus(waitTime.dividedBy(16)).plus(margin);
    }

    private static String escape(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** For descriptions: {@code tag=a,b node-meta=zone:eu dc=dc2}, only what is set. */
    String filters() {
        StringBuilder s = new StringBuilder();
        if (!passingOnly) {
            s.append(", all health states");
        }
        if (!tags.isEmpty()) {
            s.append(", tag=").append(String.join(",", tags));
        }
        if (!nodeMeta.isEmpty()) {
            s.append(", node-meta=");
            nodeMeta.forEach((k, v) -> s.append(k).append(':').append(v).append(','));
            s.setLength(s.length() - 1);
        }
        if (datacenter != null) {
            s.append(", dc=").append(datacenter);
        }
        if (filter != null) {
            s.append(", filter=").append(filter);
        }
        if (consistency != Consistency.DEFAULT) {
            s.append(", ").append(consistency.name().toLowerCase(java.util.Locale.ROOT)).append(" reads");
        }
        return s.toString();
    }
}
