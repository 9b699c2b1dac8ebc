package dev.rollcall.api;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/** {@link Settings} over an immutable map of full keys. */
final class MapSettings implements Settings {

    private final String prefix;
    private final Map<String, String> values;

    MapSettings(String prefix, Map<String, String> values) {
        this.prefix = prefix;
        this.values = values;
    }

    @Override
    public Optional<String> raw(String key) {
        return Optional.ofNullable(values.get(fullKey(key))).map(String::strip).filter(s -> !s.isEmpty());
    }

    @Override
    public String fullKey(String key) {
        return prefix + Objects.requireNonNull(key, "key");
    }

    @Override
    public Settings scope(String subPrefix) {
        return new MapSettings(fullKey(subPrefix), values);
    }

    @Override
    public String toString() {
        return "Settings[" + prefix + "*]";
    }
}
