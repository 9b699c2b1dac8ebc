package dev.rollcall.server;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.server.internal.catalog.ServeKeys;
import java.time.Duration;
import java.util.List;

/**
 * Every {@code rollcall.serve.*} key: {@link FleetServer.Builder}, {@code rollcall serve}, the Spring
 * Boot metadata and docs/configuration.md's table take names, defaults and bounds from these
 * constants. Each is defined once, inside the server, and handed out here as the same object (so that
 * the server's internals never point back at this package). Found by {@link java.util.ServiceLoader}.
 * Stateless.
 */
public final class ServerKeys implements KeyCatalog {

    public static final SettingKey<String> HOST = ServeKeys.HOST;
    public static final SettingKey<Integer> PORT = ServeKeys.PORT;
    public static final SettingKey<Integer> HTTP_PORT = ServeKeys.HTTP_PORT;
    public static final SettingKey<String> TLS_CERT = ServeKeys.TLS_CERT;
    public static final SettingKey<String> TLS_KEY = ServeKeys.TLS_KEY;
    public static final SettingKey<String> TLS_CLIENT_CA = ServeKeys.TLS_CLIENT_CA;
    public static final SettingKey<String> TOKEN_FILE = ServeKeys.TOKEN_FILE;
    public static final SettingKey<Integer> MAX_WATCHERS = ServeKeys.MAX_WATCHERS;
    public static final SettingKey<Integer> MAX_WATCHERS_PER_CONNECTION = ServeKeys.MAX_WATCHERS_PER_CONNECTION;
    public static final SettingKey<Integer> MAX_HOLDS = ServeKeys.MAX_HOLDS;
    public static final SettingKey<Integer> MAX_HOLDS_PER_CONNECTION = ServeKeys.MAX_HOLDS_PER_CONNECTION;
    public static final SettingKey<Integer> MAX_REQUEST_BYTES = ServeKeys.MAX_REQUEST_BYTES;
    public static final SettingKey<Duration> KEEPALIVE_TIME = ServeKeys.KEEPALIVE_TIME;
    public static final SettingKey<Duration> KEEPALIVE_TIMEOUT = ServeKeys.KEEPALIVE_TIMEOUT;
    public static final SettingKey<Boolean> XDS_ENABLED = ServeKeys.XDS_ENABLED;
    public static final SettingKey<String> XDS_FLEET = ServeKeys.XDS_FLEET;
    public static final SettingKey<Integer> XDS_MAX_STREAMS = ServeKeys.XDS_MAX_STREAMS;
    public static final SettingKey<Integer> XDS_MAX_STREAMS_PER_CONNECTION = ServeKeys.XDS_MAX_STREAMS_PER_CONNECTION;
    public static final SettingKey<Integer> XDS_MAX_RESOURCES_PER_STREAM = ServeKeys.XDS_MAX_RESOURCES_PER_STREAM;
    public static final SettingKey<Integer> XDS_MAX_REQUEST_BYTES = ServeKeys.XDS_MAX_REQUEST_BYTES;

    @Override
    public List<SettingKey<?>> keys() {
        return ServeKeys.ALL;
    }
}
