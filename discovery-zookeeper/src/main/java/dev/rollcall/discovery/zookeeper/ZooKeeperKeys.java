package dev.rollcall.discovery.zookeeper;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.time.Duration;
import java.util.List;

/**
 * The ZooKeeper backend's keys, discovery's and the worker's {@code registration.*}, each declared
 * once; {@link ZooKeeperSettings} and {@link ZooKeeperRegistrationProvider} read through them.
 * Found by {@link java.util.ServiceLoader}. Stateless.
 */
public final class ZooKeeperKeys implements KeyCatalog {

    private static final String MODULE = "rollcall-discovery-zookeeper";
    private static final String SCOPE = "rollcall.discovery.zookeeper.";

    static final SettingKey<String> CONNECT = SettingKey.define(MODULE, SCOPE + "connect", SettingType.TEXT,
            "ZooKeeper's connection string, host:port[,host:port...][/chroot]").required();
    static final SettingKey<String> PATH = SettingKey.define(MODULE, SCOPE + "path", SettingType.TEXT,
            "the node whose children are the workers").byDefault("/rollcall/workers");
    /** ZooKeeper takes whole milliseconds in an int: the 24-day limit is checked where it is read. */
    static final SettingKey<Duration> SESSION_TIMEOUT = SettingKey.define(MODULE, SCOPE + "session-timeout",
            SettingType.DURATION, "the session timeout asked of ZooKeeper")
            .byDefault(Duration.ofSeconds(15)).above(Duration.ZERO);
    static final SettingKey<Duration> CONNECTION_TIMEOUT = SettingKey.define(MODULE, SCOPE + "connection-timeout",
            SettingType.DURATION, "how long one operation waits for a connection before it fails")
            .byDefault(Duration.ofSeconds(5)).above(Duration.ZERO);
    static final SettingKey<Duration> BACKOFF_INITIAL = SettingKey.define(MODULE, SCOPE + "backoff.initial",
            SettingType.DURATION, "first delay before reading everything again after a failed read")
            .byDefault(Duration.ofMillis(500)).above(Duration.ZERO);
    static final SettingKey<Duration> BACKOFF_MAX = SettingKey.define(MODULE, SCOPE + "backoff.max",
            SettingType.DURATION, "longest delay between attempts, at least backoff.initial")
            .byDefault(Duration.ofSeconds(10)).above(Duration.ZERO);
    static final SettingKey<String> USER = SettingKey.define(MODULE, SCOPE + "user", SettingType.TEXT,
            "digest user; needs password");
    static final SettingKey<String> PASSWORD = SettingKey.define(MODULE, SCOPE + "password", SettingType.TEXT,
            "that user's password; never logged");
    static final SettingKey<String> REGISTRATION_ID = SettingKey.define(MODULE, SCOPE + "registration.id",
            SettingType.TEXT, "workers: the node name and x-discovery instance id").derivedDefault("<host>_<port>");

    private static final List<SettingKey<?>> KEYS = List.of(CONNECT, PATH, SESSION_TIMEOUT, CONNECTION_TIMEOUT,
            BACKOFF_INITIAL, BACKOFF_MAX, USER, PASSWORD, REGISTRATION_ID);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }

    /** {@code key}'s name under {@code rollcall.discovery.zookeeper.}, as the provider's scoped view reads it. */
    static String relative(SettingKey<?> key) {
        return key.name().substring(SCOPE.length());
    }
}
