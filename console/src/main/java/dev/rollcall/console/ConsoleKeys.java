package dev.rollcall.console;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.time.Duration;
import java.util.List;

/**
 * Every {@code rollcall.console.*} key, each declared once (the names are {@link RollcallConsole}'s
 * public constants); {@link RollcallConsole.Builder}, the Spring Boot metadata and the docs' tables
 * take defaults and bounds from here. Found by {@link java.util.ServiceLoader}. Stateless.
 */
public final class ConsoleKeys implements KeyCatalog {

    private static final String CONSOLE = "rollcall-console";

    static final SettingKey<Boolean> ALLOW_REMOTE = SettingKey.define(CONSOLE, RollcallConsole.ALLOW_REMOTE_KEY,
            SettingType.BOOLEAN, "let the console bind a non-loopback address").byDefault(false);
    static final SettingKey<List<String>> ALLOWED_HOSTS = SettingKey.define(CONSOLE,
            RollcallConsole.ALLOWED_HOSTS_KEY, SettingType.LIST,
            "host names or addresses, beside loopback's, that requests may name in their Host")
            .derivedDefault("(none)");
    static final SettingKey<Integer> MAX_CLIENTS = SettingKey.define(CONSOLE, RollcallConsole.MAX_CLIENTS_KEY,
            SettingType.WHOLE_NUMBER, "event streams open at once at most").byDefault(16).atLeast(1).atMost(1024);
    static final SettingKey<Duration> WRITE_TIMEOUT = SettingKey.define(CONSOLE, RollcallConsole.WRITE_TIMEOUT_KEY,
            SettingType.DURATION, "how long a connection may take none of what it is sent before it is closed")
            .byDefault(Duration.ofSeconds(10)).above(Duration.ZERO);
    static final SettingKey<Duration> REQUEST_TIMEOUT = SettingKey.define(CONSOLE,
            RollcallConsole.REQUEST_TIMEOUT_KEY, SettingType.DURATION,
            "how long a connection's request head may take to arrive (from its opening or last answer)")
            .byDefault(Duration.ofSeconds(5)).above(Duration.ZERO);
    static final SettingKey<Integer> TIMELINE = SettingKey.define(CONSOLE, RollcallConsole.TIMELINE_KEY,
            SettingType.WHOLE_NUMBER, "how many snapshots the timeline keeps").byDefault(50).atLeast(1).atMost(1000);

    private static final List<SettingKey<?>> KEYS = List.of(ALLOW_REMOTE, ALLOWED_HOSTS, MAX_CLIENTS, WRITE_TIMEOUT,
            REQUEST_TIMEOUT, TIMELINE);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }
}
