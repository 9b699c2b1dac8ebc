package dev.rollcall.discovery.etcd;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.time.Duration;
import java.util.List;

/**
 * The etcd backend's keys, discovery's and the worker's {@code registration.*}, each declared once;
 * {@link EtcdSettings} and {@link EtcdRegistrationProvider} read through them. Found by
 * {@link java.util.ServiceLoader}. Stateless.
 */
public final class EtcdKeys implements KeyCatalog {

    private static final String MODULE = "rollcall-discovery-etcd";
    private static final String SCOPE = "rollcall.discovery.etcd.";

    static final SettingKey<List<String>> ENDPOINTS = SettingKey.define(MODULE, SCOPE + "endpoints", SettingType.LIST,
            "comma-separated etcd client URLs, all http:// or all https://").required();
    static final SettingKey<String> PREFIX = SettingKey.define(MODULE, SCOPE + "prefix", SettingType.TEXT,
            "the key prefix that holds the workers").byDefault("/rollcall/workers/");
    static final SettingKey<Duration> CONNECT_TIMEOUT = SettingKey.define(MODULE, SCOPE + "connect-timeout",
            SettingType.DURATION, "how long to wait for a connection to etcd").byDefault(Duration.ofSeconds(3))
            .above(Duration.ZERO);
    static final SettingKey<Duration> REQUEST_TIMEOUT = SettingKey.define(MODULE, SCOPE + "request-timeout",
            SettingType.DURATION, "deadline of every call; also the HTTP/2 keepalive timeout")
            .byDefault(Duration.ofSeconds(5)).above(Duration.ZERO);
    /** A silent etcd (hung, or cut off without a reset) is noticed within this plus request-timeout. */
    static final SettingKey<Duration> KEEPALIVE_TIME = SettingKey.define(MODULE, SCOPE + "keepalive-time",
            SettingType.DURATION, "how often a watching discovery asks etcd for a sign of life")
            .byDefault(Duration.ofSeconds(5)).atLeast(Duration.ofMillis(100));
    /** Kubernetes' reflectors page by 500 too. */
    static final SettingKey<Integer> PAGE_SIZE = SettingKey.define(MODULE, SCOPE + "page-size",
            SettingType.WHOLE_NUMBER, "keys per range request when discovery reads the prefix").byDefault(500)
            .atLeast(1).atMost(10_000);
    static final SettingKey<Duration> BACKOFF_INITIAL = SettingKey.define(MODULE, SCOPE + "backoff.initial",
            SettingType.DURATION, "first delay before trying again after a failure")
            .byDefault(Duration.ofMillis(500)).above(Duration.ZERO);
    static final SettingKey<Duration> BACKOFF_MAX = SettingKey.define(MODULE, SCOPE + "backoff.max",
            SettingType.DURATION, "longest delay between attempts, at least backoff.initial")
            .byDefault(Duration.ofSeconds(10)).above(Duration.ZERO);
    static final SettingKey<String> TLS_CA = SettingKey.define(MODULE, SCOPE + "tls.ca", SettingType.TEXT,
            "PEM file of the CAs that signed etcd's certificate");
    static final SettingKey<String> TLS_CERT = SettingKey.define(MODULE, SCOPE + "tls.cert", SettingType.TEXT,
            "PEM client certificate; needs tls.key");
    static final SettingKey<String> TLS_KEY = SettingKey.define(MODULE, SCOPE + "tls.key", SettingType.TEXT,
            "PEM (PKCS#8) private key of tls.cert");
    static final SettingKey<String> USER = SettingKey.define(MODULE, SCOPE + "user", SettingType.TEXT,
            "etcd user; needs password");
    static final SettingKey<String> PASSWORD = SettingKey.define(MODULE, SCOPE + "password", SettingType.TEXT,
            "that user's password; never logged");
    static final SettingKey<Boolean> ALLOW_PLAINTEXT_CREDENTIALS = SettingKey.define(MODULE,
            SCOPE + "allow-plaintext-credentials", SettingType.BOOLEAN,
            "true sends the password over http:// to a host that is not loopback").byDefault(false);
    /** Keep-alives go out every third of it: under 2s they would leave too little slack. */
    static final SettingKey<Duration> REGISTRATION_TTL = SettingKey.define(MODULE, SCOPE + "registration.ttl",
            SettingType.DURATION, "workers: the lease's time to live, rounded up to whole seconds")
            .byDefault(Duration.ofSeconds(10)).atLeast(Duration.ofSeconds(2));
    static final SettingKey<String> REGISTRATION_ID = SettingKey.define(MODULE, SCOPE + "registration.id",
            SettingType.TEXT, "workers: the last part of the worker's key").derivedDefault("<host>_<port>");

    private static final List<SettingKey<?>> KEYS = List.of(ENDPOINTS, PREFIX, CONNECT_TIMEOUT, REQUEST_TIMEOUT,
            KEEPALIVE_TIME, PAGE_SIZE, BACKOFF_INITIAL, BACKOFF_MAX, TLS_CA, TLS_CERT, TLS_KEY, USER, PASSWORD,
            ALLOW_PLAINTEXT_CREDENTIALS, REGISTRATION_TTL, REGISTRATION_ID);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }

    /** {@code key}'s name under {@code rollcall.discovery.etcd.}, as the provider's scoped view reads it. */
    static String relative(SettingKey<?> key) {
        return key.name().substring(SCOPE.length());
    }
}
