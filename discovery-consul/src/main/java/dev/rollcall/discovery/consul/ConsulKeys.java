package dev.rollcall.discovery.consul;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.time.Duration;
import java.util.List;

/**
 * The Consul backend's keys, discovery's and the worker's {@code registration.*}, each declared
 * once; {@link ConsulSettings}, {@link HealthQuery} and {@link ConsulRegistrationProvider} read
 * through them. Found by {@link java.util.ServiceLoader}. Stateless.
 */
public final class ConsulKeys implements KeyCatalog {

    private static final String MODULE = "rollcall-discovery-consul";
    private static final String SCOPE = "rollcall.discovery.consul.";

    static final SettingKey<String> SERVICE = SettingKey.define(MODULE, SCOPE + "service", SettingType.TEXT,
            "the Consul service name the workers register as").required();
    static final SettingKey<String> ADDRESS = SettingKey.define(MODULE, SCOPE + "address", SettingType.TEXT,
            "the agent: http://host:port, https://host:port or host:port").byDefault("http://127.0.0.1:8500");
    static final SettingKey<String> TOKEN = SettingKey.define(MODULE, SCOPE + "token", SettingType.TEXT,
            "ACL token, sent as the X-Consul-Token header; never logged");
    static final SettingKey<Boolean> ALLOW_PLAINTEXT_CREDENTIALS = SettingKey.define(MODULE,
            SCOPE + "allow-plaintext-credentials", SettingType.BOOLEAN,
            "true sends the token over http:// to a host that is not loopback").byDefault(false);
    static final SettingKey<Duration> REQUEST_TIMEOUT = SettingKey.define(MODULE, SCOPE + "request-timeout",
            SettingType.DURATION, "connect timeout, and timeout of calls that do not block")
            .byDefault(Duration.ofSeconds(10)).atLeast(Duration.ofMillis(100));
    /** A health answer is about 2 KB per instance: the default holds tens of thousands. */
    static final SettingKey<Integer> MAX_RESPONSE_BYTES = SettingKey.define(MODULE, SCOPE + "max-response-bytes",
            SettingType.WHOLE_NUMBER, "the largest answer taken from the agent, in bytes").byDefault(64 << 20)
            .atLeast(1024).atMost(1 << 30);
    static final SettingKey<String> TLS_CA = SettingKey.define(MODULE, SCOPE + "tls.ca", SettingType.TEXT,
            "PEM file of the CAs to trust for an https address").derivedDefault("JDK trust store");
    static final SettingKey<String> TLS_CERT = SettingKey.define(MODULE, SCOPE + "tls.cert", SettingType.TEXT,
            "PEM client certificate (chain); needs tls.key");
    static final SettingKey<String> TLS_KEY = SettingKey.define(MODULE, SCOPE + "tls.key", SettingType.TEXT,
            "PEM private key of tls.cert, not encrypted");
    static final SettingKey<String> VERSION_META = SettingKey.define(MODULE, SCOPE + "version-meta",
            SettingType.TEXT, "the service meta key that holds a worker's version; none: no version")
            .byDefault("version");
    static final SettingKey<Boolean> PASSING_ONLY = SettingKey.define(MODULE, SCOPE + "passing-only",
            SettingType.BOOLEAN, "only instances whose checks all pass").byDefault(true);
    static final SettingKey<List<String>> TAG = SettingKey.define(MODULE, SCOPE + "tag", SettingType.LIST,
            "tags an instance must all have; workers add them to their registration");
    static final SettingKey<List<String>> NODE_META = SettingKey.define(MODULE, SCOPE + "node-meta",
            SettingType.LIST, "key:value pairs the instance's node must have");
    static final SettingKey<String> FILTER = SettingKey.define(MODULE, SCOPE + "filter", SettingType.TEXT,
            "a Consul filter expression on the health entries");
    /** Case-insensitive, so checked where it is read rather than by a list of allowed values. */
    static final SettingKey<String> CONSISTENCY = SettingKey.define(MODULE, SCOPE + "consistency",
            SettingType.TEXT, "Consul's read consistency: default, stale or consistent").byDefault("default");
    static final SettingKey<String> DATACENTER = SettingKey.define(MODULE, SCOPE + "datacenter", SettingType.TEXT,
            "another datacenter to watch").derivedDefault("the agent's");
    /** Consul's own default; Consul caps it at 10 minutes. */
    static final SettingKey<Duration> WAIT = SettingKey.define(MODULE, SCOPE + "wait", SettingType.DURATION,
            "how long one blocking query may wait when nothing changes, whole seconds")
            .byDefault(Duration.ofMinutes(5)).atLeast(Duration.ofSeconds(1)).atMost(Duration.ofMinutes(10));
    static final SettingKey<Duration> BACKOFF_INITIAL = SettingKey.define(MODULE, SCOPE + "backoff.initial",
            SettingType.DURATION, "first retry delay after a failure, at most backoff.max")
            .byDefault(Duration.ofSeconds(1)).above(Duration.ZERO);
    static final SettingKey<Duration> BACKOFF_MAX = SettingKey.define(MODULE, SCOPE + "backoff.max",
            SettingType.DURATION, "longest retry delay").byDefault(Duration.ofSeconds(30)).above(Duration.ZERO);
    /** Consul's docs: a token bucket of burst 2, degrading to polling about every 15 s under churn. */
    static final SettingKey<Duration> RATE_LIMIT_INTERVAL = SettingKey.define(MODULE,
            SCOPE + "rate-limit.interval", SettingType.DURATION,
            "under sustained churn, one health query per this interval; 0s: no limit")
            .byDefault(Duration.ofSeconds(15)).atMost(Duration.ofMinutes(10));
    static final SettingKey<Integer> RATE_LIMIT_BURST = SettingKey.define(MODULE, SCOPE + "rate-limit.burst",
            SettingType.WHOLE_NUMBER, "queries that may go at once before rate-limit.interval applies")
            .byDefault(2).atLeast(1).atMost(100);
    /**
     * A blocking query is silent for up to {@code wait} by design, so silence alone tells nothing:
     * the agent is asked for a sign of life, and one unanswered within request-timeout means it is
     * hung or cut off.
     */
    static final SettingKey<Duration> KEEPALIVE_TIME = SettingKey.define(MODULE, SCOPE + "keepalive-time",
            SettingType.DURATION, "how often a watching discovery asks the agent for a sign of life")
            .byDefault(Duration.ofSeconds(5)).atLeast(Duration.ofMillis(100));
    static final SettingKey<Duration> REGISTRATION_CHECK_TTL = SettingKey.define(MODULE,
            SCOPE + "registration.check-ttl", SettingType.DURATION,
            "workers: TTL of the worker's check, marked passing every third of it")
            .byDefault(Duration.ofSeconds(10)).atLeast(Duration.ofSeconds(1));
    static final SettingKey<Duration> REGISTRATION_DEREGISTER_AFTER = SettingKey.define(MODULE,
            SCOPE + "registration.deregister-after", SettingType.DURATION,
            "workers: how long the check may stay critical before Consul deregisters the instance")
            .byDefault(Duration.ofMinutes(1)).above(Duration.ZERO);
    static final SettingKey<String> REGISTRATION_SERVICE_ID = SettingKey.define(MODULE,
            SCOPE + "registration.service-id", SettingType.TEXT, "workers: the instance ID")
            .derivedDefault("<service>-<host>-<port>");
    static final SettingKey<List<String>> REGISTRATION_TAGS = SettingKey.define(MODULE, SCOPE + "registration.tags",
            SettingType.LIST, "workers: more tags for the instance, after those of tag");

    private static final List<SettingKey<?>> KEYS = List.of(SERVICE, ADDRESS, TOKEN, ALLOW_PLAINTEXT_CREDENTIALS,
            REQUEST_TIMEOUT, MAX_RESPONSE_BYTES, TLS_CA, TLS_CERT, TLS_KEY, VERSION_META, PASSING_ONLY, TAG, NODE_META,
            FILTER, CONSISTENCY, DATACENTER, WAIT, BACKOFF_INITIAL, BACKOFF_MAX, RATE_LIMIT_INTERVAL, RATE_LIMIT_BURST,
            KEEPALIVE_TIME, REGISTRATION_CHECK_TTL, REGISTRATION_DEREGISTER_AFTER, REGISTRATION_SERVICE_ID,
            REGISTRATION_TAGS);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }

    /** {@code key}'s name under {@code rollcall.discovery.consul.}, as the provider's scoped view reads it. */
    static String relative(SettingKey<?> key) {
        return key.name().substring(SCOPE.length());
    }
}
