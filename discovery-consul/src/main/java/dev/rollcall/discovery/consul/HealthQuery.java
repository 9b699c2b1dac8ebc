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

    static final String PASSING_ONLY = ConsulKeys.relative(ConsulKeys.PASSING_ONLY);
    static final String TAG = ConsulKeys.relative(ConsulKeys.TAG);
    static final String NODE_META = ConsulKeys.relative(ConsulKeys.NODE_META);
    static final String DATACENTER = ConsulKeys.relative(ConsulKeys.DATACENTER);
    static final String WAIT = ConsulKeys.relative(ConsulKeys.WAIT);
    static final String BACKOFF_INITIAL = ConsulKeys.relative(ConsulKeys.BACKOFF_INITIAL);
    static final String BACKOFF_MAX = ConsulKeys.relative(ConsulKeys.BACKOFF_MAX);
    static final String RATE_LIMIT_INTERVAL = ConsulKeys.relative(ConsulKeys.RATE_LIMIT_INTERVAL);
    static final String RATE_LIMIT_BURST = ConsulKeys.relative(ConsulKeys.RATE_LIMIT_BURST);
    static final String FILTER = ConsulKeys.relative(ConsulKeys.FILTER);
    static final String CONSISTENCY = ConsulKeys.relative(ConsulKeys.CONSISTENCY);
    static final String KEEPALIVE_TIME = ConsulKeys.relative(ConsulKeys.KEEPALIVE_TIME);

    static final Duration MAX_WAIT = ConsulKeys.WAIT.max();

    HealthQuery {
        tags = List.copyOf(tags);
        nodeMeta = Map.copyOf(nodeMeta);
    }

    /** Reads the discovery-only keys; {@link ConsulSettings#read} reads the shared ones. */
    static HealthQuery read(Settings settings) {
        boolean passingOnly = settings.get(ConsulKeys.PASSING_ONLY);
        List<String> tags = settings.find(ConsulKeys.TAG).orElse(List.of());
        List<String> metaItems = settings.find(ConsulKeys.NODE_META).orElse(List.of());
        Optional<String> datacenter = settings.find(ConsulKeys.DATACENTER);
        Duration wait = waitOf(settings);
        Duration initial = settings.get(ConsulKeys.BACKOFF_INITIAL);
        Duration max = settings.get(ConsulKeys.BACKOFF_MAX);
        Duration rateInterval = rateIntervalOf(settings);
        int rateBurst = settings.get(ConsulKeys.RATE_LIMIT_BURST);
        Optional<String> filter = settings.find(ConsulKeys.FILTER);
        String consistencyText = settings.get(ConsulKeys.CONSISTENCY);
        Duration keepalive = settings.get(ConsulKeys.KEEPALIVE_TIME);
        filter.ifPresent(f -> {
            if (f.isBlank() || f.chars().anyMatch(Character::isISOControl)) {
                throw ConfigurationException.invalid(settings.fullKey(FILTER), f,
                        "a Consul filter expression on one line, e.g. Service.Meta.zone == \"eu-1\"");
            }
        });
        Consistency consistency = Consistency.parse(consistencyText).orElseThrow(() ->
                ConfigurationException.invalid(settings.fullKey(CONSISTENCY), consistencyText,
                        "stale, default or consistent"));

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
        if (wait.toNanosPart() != 0) {
            throw waitError(settings);
        }
        if (initial.compareTo(max) > 0) {
            throw ConfigurationException.invalid(settings.fullKey(BACKOFF_INITIAL),
                    settings.raw(BACKOFF_INITIAL).orElse(initial.toString()),
                    "at most " + settings.fullKey(BACKOFF_MAX) + " (" + max + ")");
        }
        return new HealthQuery(passingOnly, tags, nodeMeta, datacenter.orElse(null), wait, initial, max,
                rateInterval, rateBurst, filter.map(String::strip).orElse(null), consistency, keepalive);
    }

    /** The catalog's check of {@code wait}, in words that say whose limit it is. */
    private static Duration waitOf(Settings settings) {
        try {
            return settings.get(ConsulKeys.WAIT);
        } catch (ConfigurationException e) {
            throw waitError(settings);
        }
    }

    private static ConfigurationException waitError(Settings settings) {
        return ConfigurationException.invalid(settings.fullKey(WAIT), settings.raw(WAIT).orElse(""),
                "whole seconds from 1s to 10m (Consul's limit)");
    }

    /** The catalog's check of {@code rate-limit.interval}, saying what 0s means and what Consul suggests. */
    private static Duration rateIntervalOf(Settings settings) {
        try {
            return settings.get(ConsulKeys.RATE_LIMIT_INTERVAL);
        } catch (ConfigurationException e) {
            throw ConfigurationException.invalid(settings.fullKey(RATE_LIMIT_INTERVAL),
                    settings.raw(RATE_LIMIT_INTERVAL).orElse(""),
                    "a duration from 0s (no limit) to 10m; Consul suggests about 15s");
        }
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
