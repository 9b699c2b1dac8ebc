package dev.rollcall.discovery.dns;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.time.Duration;
import java.util.List;

/**
 * The DNS backend's keys, each declared once; {@link DnsSettings} reads through them. There are no
 * {@code registration.*} keys: records are published by whoever runs the zone. Found by
 * {@link java.util.ServiceLoader}. Stateless.
 */
public final class DnsKeys implements KeyCatalog {

    private static final String MODULE = "rollcall-discovery-dns";
    private static final String SCOPE = "rollcall.discovery.dns.";

    static final SettingKey<String> NAME = SettingKey.define(MODULE, SCOPE + "name", SettingType.TEXT,
            "the name to look up, taken as absolute").required();
    /** Case-insensitive, so checked where it is read rather than by a list of allowed values. */
    static final SettingKey<String> RECORD_TYPE = SettingKey.define(MODULE, SCOPE + "record-type", SettingType.TEXT,
            "A, AAAA or SRV").byDefault("A");
    /** A whole number, but refused with SRV: read as text so that the error can say why. */
    static final SettingKey<String> PORT = SettingKey.define(MODULE, SCOPE + "port", SettingType.TEXT,
            "the workers' port, 1 to 65535; refused with SRV").derivedDefault("required for `A`/`AAAA`");
    /** Case-insensitive, so checked where it is read rather than by a list of allowed values. */
    static final SettingKey<String> SCHEME = SettingKey.define(MODULE, SCOPE + "scheme", SettingType.TEXT,
            "grpc (plaintext) or grpcs (TLS), for every record type").byDefault("grpc");
    static final SettingKey<String> SERVER = SettingKey.define(MODULE, SCOPE + "server", SettingType.TEXT,
            "the DNS server to ask, ip[:port]").derivedDefault("the system's resolvers");
    /** A TTL of 0 is common: this keeps it from turning into a busy loop. */
    static final SettingKey<Duration> MIN_INTERVAL = SettingKey.define(MODULE, SCOPE + "min-interval",
            SettingType.DURATION, "the shortest wait between lookups, whatever the TTL says")
            .byDefault(Duration.ofSeconds(1)).above(Duration.ZERO);
    static final SettingKey<Duration> MAX_INTERVAL = SettingKey.define(MODULE, SCOPE + "max-interval",
            SettingType.DURATION, "the longest wait between lookups, at least min-interval")
            .byDefault(Duration.ofSeconds(30)).above(Duration.ZERO);
    static final SettingKey<Duration> TIMEOUT = SettingKey.define(MODULE, SCOPE + "timeout", SettingType.DURATION,
            "how long one question may go unanswered").byDefault(Duration.ofSeconds(2)).above(Duration.ZERO);
    static final SettingKey<Duration> LOOKUP_TIMEOUT = SettingKey.define(MODULE, SCOPE + "lookup-timeout",
            SettingType.DURATION, "how long one whole lookup may take, at least timeout")
            .byDefault(Duration.ofSeconds(5)).above(Duration.ZERO);

    private static final List<SettingKey<?>> KEYS = List.of(NAME, RECORD_TYPE, PORT, SCHEME, SERVER, MIN_INTERVAL,
            MAX_INTERVAL, TIMEOUT, LOOKUP_TIMEOUT);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }

    /** {@code key}'s name under {@code rollcall.discovery.dns.}, as the backend's scoped view reads it. */
    static String relative(SettingKey<?> key) {
        return key.name().substring(SCOPE.length());
    }
}
