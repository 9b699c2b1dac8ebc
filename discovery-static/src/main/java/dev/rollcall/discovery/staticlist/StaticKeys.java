package dev.rollcall.discovery.staticlist;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.time.Duration;
import java.util.List;

/**
 * The static backend's keys, each declared once; {@link StaticWorkerDiscoveryProvider} reads
 * through them. Found by {@link java.util.ServiceLoader}. Stateless.
 */
public final class StaticKeys implements KeyCatalog {

    private static final String MODULE = "rollcall-discovery-static";

    static final SettingKey<List<String>> ENDPOINTS = SettingKey.define(MODULE, "rollcall.discovery.static.endpoints",
            SettingType.LIST, "comma-separated endpoint URLs").derivedDefault("—");
    static final SettingKey<String> FILE = SettingKey.define(MODULE, "rollcall.discovery.static.file",
            SettingType.TEXT, "a file of endpoint URLs, one a line, # comments; watched").derivedDefault("—");
    /** Below 100 ms a re-read of the file is busy work, not a safety net. */
    static final SettingKey<Duration> POLL_INTERVAL = SettingKey.define(MODULE,
            "rollcall.discovery.static.file.poll-interval", SettingType.DURATION, "safety re-read of the file")
            .byDefault(Duration.ofSeconds(2)).atLeast(Duration.ofMillis(100));

    private static final List<SettingKey<?>> KEYS = List.of(ENDPOINTS, FILE, POLL_INTERVAL);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }
}
