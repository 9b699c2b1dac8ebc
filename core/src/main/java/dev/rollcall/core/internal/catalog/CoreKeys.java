package dev.rollcall.core.internal.catalog;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.time.Duration;
import java.util.List;

/**
 * Every key the resolver reads, each declared once: the settings readers, {@code WorkerResolver.Builder}'s
 * setters, the unknown-key check, the Spring Boot metadata and docs/configuration.md's tables take
 * names, defaults and bounds from here. Found by {@link java.util.ServiceLoader}. Stateless.
 */
public final class CoreKeys implements KeyCatalog {

    private static final String CORE = "rollcall-core";

    public static final SettingKey<String> DISCOVERY_TYPE = SettingKey.define(CORE, "rollcall.discovery.type",
            SettingType.TEXT, "the discovery backend: static, etcd, consul, k8s, dns, zookeeper, or a custom type")
            .required();
    public static final SettingKey<String> POLICY_TYPE = SettingKey.define(CORE, "rollcall.policy.type",
            SettingType.TEXT, "the version policy: exact, semver, rollout, prefer, or a custom type").required();

    public static final SettingKey<Duration> PROBE_TIMEOUT = SettingKey.define(CORE, "rollcall.probe.timeout",
            SettingType.DURATION, "deadline of each probe, connection included")
            .byDefault(Duration.ofSeconds(2)).above(Duration.ZERO);
    public static final SettingKey<Integer> PROBE_CONCURRENCY = SettingKey.define(CORE, "rollcall.probe.concurrency",
            SettingType.WHOLE_NUMBER, "probes in flight at most").byDefault(64).atLeast(1).atMost(100_000);
    public static final SettingKey<Duration> BACKOFF_INITIAL = SettingKey.define(CORE,
            "rollcall.probe.backoff.initial", SettingType.DURATION,
            "first retry after a failed probe; doubles up to backoff.max, up to 20 % shorter at random")
            .byDefault(Duration.ofMillis(250)).above(Duration.ZERO);
    public static final SettingKey<Duration> BACKOFF_MAX = SettingKey.define(CORE, "rollcall.probe.backoff.max",
            SettingType.DURATION, "longest retry delay after failed probes")
            .byDefault(Duration.ofSeconds(30)).above(Duration.ZERO);
    public static final SettingKey<Duration> REFRESH_INTERVAL = SettingKey.define(CORE,
            "rollcall.probe.refresh-interval", SettingType.DURATION,
            "re-probe a worker that answered this often even if nothing changed")
            .byDefault(Duration.ofMinutes(10)).above(Duration.ZERO);
    public static final SettingKey<Boolean> KEEP_CHANNELS = SettingKey.define(CORE, "rollcall.probe.keep-channels",
            SettingType.BOOLEAN, "keep one idle connection per worker, so that a restart in place is noticed at once")
            .byDefault(true);
    public static final SettingKey<Integer> MAX_KEPT_CHANNELS = SettingKey.define(CORE,
            "rollcall.probe.max-kept-channels", SettingType.WHOLE_NUMBER,
            "at most this many workers hold a kept connection and stream; 0 only with keep-channels=false")
            .derivedDefault("half the process's descriptor limit less 256, from 64 to 10,000 (4,096 where unknown)")
            .atLeast(0).atMost(10_000_000);
    public static final SettingKey<Duration> KEEPALIVE_TIME = SettingKey.define(CORE, "rollcall.probe.keepalive-time",
            SettingType.DURATION, "a kept stream asks its worker to repeat its answer after this long without news")
            .byDefault(Duration.ofSeconds(5)).atLeast(Duration.ofSeconds(1));
    public static final SettingKey<Duration> KEEPALIVE_TIMEOUT = SettingKey.define(CORE,
            "rollcall.probe.keepalive-timeout", SettingType.DURATION,
            "how much longer than the granted heartbeat a kept stream may stay silent before its worker is out")
            .byDefault(Duration.ofSeconds(3)).atLeast(Duration.ofMillis(100));
    public static final SettingKey<Integer> MAX_RESPONSE_BYTES = SettingKey.define(CORE,
            "rollcall.probe.max-response-bytes", SettingType.WHOLE_NUMBER, "largest WorkerInfo answer accepted")
            .byDefault(1 << 20).atLeast(1024).atMost(64 << 20);
    public static final SettingKey<String> PROBE_PROTOCOL = SettingKey.define(CORE, "rollcall.probe.protocol",
            SettingType.TEXT, "how workers are asked: rollcall, datafusion-distributed, grpc-health, none, or a jar's")
            .byDefault("rollcall");
    public static final SettingKey<String> GRPC_HEALTH_SERVICE = SettingKey.define(CORE,
            "rollcall.probe.grpc-health.service", SettingType.TEXT,
            "with probe.protocol grpc-health: the grpc.health.v1 service asked about (empty: the whole server)")
            .byDefault("");
    public static final SettingKey<String> TLS_CA = SettingKey.define(CORE, "rollcall.probe.tls.ca", SettingType.TEXT,
            "PEM CA certificate(s) that grpcs:// workers' certificates must chain to")
            .derivedDefault("the JDK's trust store");
    public static final SettingKey<String> TLS_CERT = SettingKey.define(CORE, "rollcall.probe.tls.cert",
            SettingType.TEXT, "PEM client certificate (chain) for workers that require mutual TLS; needs tls.key");
    public static final SettingKey<String> TLS_KEY = SettingKey.define(CORE, "rollcall.probe.tls.key",
            SettingType.TEXT, "PEM PKCS#8 private key of tls.cert (never logged or shown); needs tls.cert");
    public static final SettingKey<String> TLS_AUTHORITY = SettingKey.define(CORE, "rollcall.probe.tls.authority",
            SettingType.TEXT, "the name workers' certificates are checked against (and sent as SNI)")
            .derivedDefault("each endpoint's host");

    public static final SettingKey<Integer> SUBSET_SIZE = SettingKey.define(CORE, "rollcall.subset.size",
            SettingType.WHOLE_NUMBER, "use only this many of the workers the policy accepts (rendezvous on the"
                    + " coordinator id)").derivedDefault("unset (off)").atLeast(1).atMost(10_000_000);
    public static final SettingKey<String> COORDINATOR_ID = SettingKey.define(CORE, "rollcall.subset.coordinator-id",
            SettingType.TEXT, "the id this coordinator's subset is chosen by")
            .derivedDefault("HOSTNAME, else the host's name, else a random UUID (one WARN)");
    public static final SettingKey<Boolean> EXACT_DRAIN = SettingKey.define(CORE, "rollcall.drain.exact",
            SettingType.BOOLEAN, "hold workers under lease() and release each draining one when no lease lists it")
            .byDefault(false);

    public static final SettingKey<Boolean> FETCH_SCHEMAS = SettingKey.define(CORE, "rollcall.schemas.fetch",
            SettingType.BOOLEAN, "fetch each worker version's schema through server reflection").byDefault(true);
    public static final SettingKey<Integer> SCHEMAS_MAX_RESPONSE_BYTES = SettingKey.define(CORE,
            "rollcall.schemas.max-response-bytes", SettingType.WHOLE_NUMBER,
            "the most one version's reflection answers may add up to").byDefault(4 << 20).atLeast(1024)
            .atMost(256 << 20);

    public static final SettingKey<Integer> MAX_CANDIDATES = SettingKey.define(CORE,
            "rollcall.discovery.max-candidates", SettingType.WHOLE_NUMBER,
            "the most candidates one set from discovery may list; a larger set is refused whole")
            .byDefault(100_000).atLeast(1).atMost(10_000_000);
    public static final SettingKey<String> CACHE_FILE = SettingKey.define(CORE, "rollcall.discovery.cache.file",
            SettingType.TEXT, "keep discovery's last candidate set in this file; start from it when the backend"
                    + " is slow").derivedDefault("none");
    public static final SettingKey<Duration> CACHE_MAX_WAIT = SettingKey.define(CORE,
            "rollcall.discovery.cache.max-wait", SettingType.DURATION,
            "how long a starting coordinator waits for its backend before it uses the cache file")
            .byDefault(Duration.ofSeconds(3)).above(Duration.ZERO);
    public static final SettingKey<Integer> CACHE_MAX_BYTES = SettingKey.define(CORE,
            "rollcall.discovery.cache.max-bytes", SettingType.WHOLE_NUMBER, "the largest cache file read")
            .byDefault(64 << 20).atLeast(1024).atMost(Integer.MAX_VALUE - 8);
    public static final SettingKey<Boolean> CACHE_REQUIRE_TLS = SettingKey.define(CORE,
            "rollcall.discovery.cache.require-tls", SettingType.BOOLEAN,
            "refuse plaintext grpc:// endpoints from the cache file").byDefault(false);
    public static final SettingKey<Duration> CACHE_MAX_AGE = SettingKey.define(CORE,
            "rollcall.discovery.cache.max-age", SettingType.DURATION,
            "a cache file written longer ago is not started from; 0s: any age").byDefault(Duration.ofDays(1));

    public static final SettingKey<String> SELECTOR = SettingKey.define(CORE, "rollcall.selector", SettingType.TEXT,
            "a Kubernetes label selector every worker must match before the policy sees it").derivedDefault("none");
    public static final SettingKey<String> PREFER_LABELS = SettingKey.define(CORE, "rollcall.prefer-labels",
            SettingType.TEXT, "a label selector of preferred workers: snapshots list only them while enough are"
                    + " compatible").derivedDefault("none");
    public static final SettingKey<Integer> PREFER_MIN_WORKERS = SettingKey.define(CORE,
            "rollcall.prefer-labels.min-workers", SettingType.WHOLE_NUMBER,
            "how many preferred workers must be compatible for the preference to apply")
            .byDefault(1).atLeast(1).atMost(1_000_000);
    public static final SettingKey<Duration> PREFER_HOLD = SettingKey.define(CORE, "rollcall.prefer-labels.hold",
            SettingType.DURATION, "after a fall-back, how long the preferred workers must be enough again before"
                    + " the preference returns").byDefault(Duration.ofSeconds(30));

    public static final SettingKey<Integer> READINESS_MIN_WORKERS = SettingKey.define(CORE,
            "rollcall.readiness.min-workers", SettingType.WHOLE_NUMBER,
            "ready() is true while at least this many workers are compatible; 0: always ready")
            .byDefault(1).atLeast(0).atMost(1_000_000);
    public static final SettingKey<String> READINESS_VERSION = SettingKey.define(CORE, "rollcall.readiness.version",
            SettingType.TEXT, "when set, only compatible workers of exactly this version count towards min-workers")
            .derivedDefault("any");
    public static final SettingKey<Duration> READINESS_MAX_STALE = SettingKey.define(CORE,
            "rollcall.readiness.max-stale", SettingType.DURATION,
            "ready() is false once discovery's set has been stale for longer than this; 0s: no bound")
            .derivedDefault("5m under claims (none, grpc-health); no bound when workers answer");

    public static final SettingKey<Integer> PUBLISH_MAX_RATE = SettingKey.define(CORE, "rollcall.publish.max-rate",
            SettingType.WHOLE_NUMBER, "snapshots per second at most; changes in between join the next one")
            .byDefault(20).atLeast(1).atMost(1_000);

    public static final SettingKey<String> METRICS_OTLP_URL = SettingKey.define(CORE, "rollcall.metrics.otlp.url",
            SettingType.TEXT, "export Rollcall's meters over OTLP/HTTP to this URL, e.g."
                    + " http://127.0.0.1:4318/v1/metrics; unset: no export");
    public static final SettingKey<Duration> METRICS_OTLP_STEP = SettingKey.define(CORE,
            "rollcall.metrics.otlp.step", SettingType.DURATION, "how often the meters are exported over OTLP")
            .byDefault(Duration.ofMinutes(1)).above(Duration.ZERO);

    private static final List<SettingKey<?>> KEYS = List.of(DISCOVERY_TYPE, POLICY_TYPE, PROBE_TIMEOUT,
            PROBE_CONCURRENCY, BACKOFF_INITIAL, BACKOFF_MAX, REFRESH_INTERVAL, KEEP_CHANNELS, MAX_KEPT_CHANNELS,
            KEEPALIVE_TIME, KEEPALIVE_TIMEOUT, MAX_RESPONSE_BYTES, PROBE_PROTOCOL, GRPC_HEALTH_SERVICE, TLS_CA,
            TLS_CERT, TLS_KEY, TLS_AUTHORITY, SUBSET_SIZE, COORDINATOR_ID, EXACT_DRAIN, FETCH_SCHEMAS,
            SCHEMAS_MAX_RESPONSE_BYTES, MAX_CANDIDATES, CACHE_FILE, CACHE_MAX_WAIT, CACHE_MAX_BYTES,
            CACHE_REQUIRE_TLS, CACHE_MAX_AGE, SELECTOR, PREFER_LABELS, PREFER_MIN_WORKERS, PREFER_HOLD,
            READINESS_MIN_WORKERS, READINESS_VERSION, READINESS_MAX_STALE, PUBLISH_MAX_RATE, METRICS_OTLP_URL,
            METRICS_OTLP_STEP);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }
}
