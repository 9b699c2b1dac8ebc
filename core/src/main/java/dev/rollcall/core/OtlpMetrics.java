package dev.rollcall.core;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.api.internal.NamedThreads;
import dev.rollcall.core.internal.catalog.CoreKeys;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.registry.otlp.OtlpConfig;
import io.micrometer.registry.otlp.OtlpMeterRegistry;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Micrometer's OTLP registry ({@code micrometer-registry-otlp}, an optional dependency of
 * {@code rollcall-core}) set up from {@code rollcall.metrics.otlp.url} and
 * {@code rollcall.metrics.otlp.step}, with the process named on the OTLP resource as the
 * OpenTelemetry semantic conventions name it: {@code service.name}, {@code service.version},
 * {@code service.instance.id}. What {@code rollcall serve} uses; a JVM host binds its resolver's
 * meters the same way:
 *
 * <pre>{@code
 * OtlpMetrics.start(config, "my-coordinator", "3.2.0", instanceId).ifPresent(otlp ->
 *         new RollcallMetrics(resolver).bindTo(otlp));   // otlp.close() when the coordinator stops
 * }</pre>
 *
 * <p>The registry exports every step from a daemon thread of its own and is closed by its owner
 * (which exports once more). A receiver that refuses (HTTP 500) or does not answer costs that
 * thread the registry's own connect and read timeouts (1 s and 10 s) per export and is logged by
 * Micrometer; nothing else waits for it. {@code OTEL_RESOURCE_ATTRIBUTES} and
 * {@code OTEL_SERVICE_NAME}, when set, win over the attributes given here, as OpenTelemetry's
 * own SDKs let them. Stateless; thread-safe.
 */
public final class OtlpMetrics {

    /** The attribute names of the OpenTelemetry semantic conventions (service). */
    public static final String SERVICE_NAME = "service.name";
    public static final String SERVICE_VERSION = "service.version";
    public static final String SERVICE_INSTANCE_ID = "service.instance.id";

    /** What Micrometer names the service when nobody did: not an operator's choice, so ours wins over it. */
    private static final String UNKNOWN_SERVICE = "unknown_service";

    private OtlpMetrics() {
    }

    /**
     * A started OTLP registry (Micrometer's {@code OtlpMeterRegistry}) exporting to
     * {@code rollcall.metrics.otlp.url} every {@code rollcall.metrics.otlp.step}; empty when the URL
     * is not set, and then {@code micrometer-registry-otlp} need not be on the class path. The
     * caller binds meters to it and closes it.
     *
     * @throws ConfigurationException naming the key and its value when the URL is not an
     *                                {@code http://} or {@code https://} URL with a host, or the step is bad;
     *                                or when the URL is set and {@code micrometer-registry-otlp} is missing
     */
    public static Optional<MeterRegistry> start(RollcallConfig config, String serviceName, String serviceVersion,
                                                    String serviceInstanceId) {
        Objects.requireNonNull(config, "config");
        Map<String, String> resource = new LinkedHashMap<>();
        resource.put(SERVICE_NAME, Objects.requireNonNull(serviceName, "serviceName"));
        resource.put(SERVICE_VERSION, Objects.requireNonNull(serviceVersion, "serviceVersion"));
        resource.put(SERVICE_INSTANCE_ID, Objects.requireNonNull(serviceInstanceId, "serviceInstanceId"));
        Settings settings = config.settings();
        Optional<String> url = settings.find(CoreKeys.METRICS_OTLP_URL);
        if (url.isEmpty()) {
            return Optional.empty();
        }
        String endpoint = checkedUrl(url.get());
        Duration step = settings.get(CoreKeys.METRICS_OTLP_STEP);
        try {
            Class.forName("io.micrometer.registry.otlp.OtlpMeterRegistry", false, OtlpMetrics.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new ConfigurationException(CoreKeys.METRICS_OTLP_URL.name(), CoreKeys.METRICS_OTLP_URL.name()
                    + " is set, but io.micrometer:micrometer-registry-otlp is not on the class path: add it");
        }
        return Optional.of(Registry.start(endpoint, step, resource));
    }

    /** The only class that names the OTLP registry's types: loaded once the URL is set and the jar is there. */
    private static final class Registry {
        static MeterRegistry start(String url, Duration step, Map<String, String> resource) {
            return OtlpMeterRegistry.builder(new RollcallOtlpConfig(url, step, resource))
                    .threadFactory(NamedThreads.daemon("rollcall-otlp"))
                    .build();
        }
    }

    private static String checkedUrl(String url) {
        String key = CoreKeys.METRICS_OTLP_URL.name();
        String expected = "an http:// or https:// URL with a host, e.g. http://127.0.0.1:4318/v1/metrics";
        try {
            URI uri = new URI(url);
            String scheme = uri.getScheme();
            if (!("http".equalsIgnoreCase(scheme) || "https".equalsIgnoreCase(scheme)) || uri.getHost() == null) {
                throw ConfigurationException.invalid(key, url, expected);
            }
            return url;
        } catch (URISyntaxException e) {
            throw ConfigurationException.invalid(key, url, expected);
        }
    }

    /** Micrometer's settings, from Rollcall's keys rather than from {@code otlp.*} properties. */
    private record RollcallOtlpConfig(String url, Duration step, Map<String, String> resource) implements OtlpConfig {

        @Override
        public String get(String key) {
            return null; // every other setting keeps Micrometer's default
        }

        @Override
        public Map<String, String> resourceAttributes() {
            Map<String, String> attributes = new LinkedHashMap<>(resource);
            OtlpConfig.super.resourceAttributes().forEach((name, value) -> {
                if (!(SERVICE_NAME.equals(name) && value.startsWith(UNKNOWN_SERVICE))) {
                    attributes.put(name, value);
                }
            });
            return attributes;
        }
    }
}
