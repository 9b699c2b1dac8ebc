package dev.rollcall.core;

import dev.rollcall.api.Settings;
import java.util.Objects;
import java.util.Optional;

/** {@link Settings} over a {@link RollcallConfig} that records every key it is asked for. */
final class TrackingSettings implements Settings {

    private final String prefix;
    private final RollcallConfig config;

    TrackingSettings(String prefix, RollcallConfig config) {
        this.prefix = prefix;
        this.config = config;
    }

    @Override
    public Optional<String> raw(String key) {
        return Optional.ofNullable(config.lookup(fullKey(key))).map(String::strip).filter(s -> !s.isEmpty());
    }

    @Override
    public String fullKey(String key) {
        return prefix + Objects.requireNonNull(key, "key");
    }

    @Override
    public Settings scope(String subPrefix) {
        return new TrackingSettings(fullKey(subPrefix), config);
    }

    @Override
    public String toString() {
        return "Settings[" + prefix + "*]";
    }
}
