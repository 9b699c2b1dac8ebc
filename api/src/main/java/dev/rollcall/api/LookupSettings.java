package dev.rollcall.api;

import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/** {@link Settings} over a function from full keys to values. */
final class LookupSettings implements Settings {

    private final String prefix;
    private final Function<String, String> lookup;

    LookupSettings(String prefix, Function<String, String> lookup) {
        this.prefix = prefix;
        this.lookup = lookup;
    }

    @Override
    public Optional<String> raw(String key) {
        return Optional.ofNullable(lookup.apply(fullKey(key))).map(String::strip).filter(s -> !s.isEmpty());
    }

    @Override
    public String fullKey(String key) {
        return prefix + Objects.requireNonNull(key, "key");
    }

    @Override
    public Settings scope(String subPrefix) {
        return new LookupSettings(fullKey(subPrefix), lookup);
    }

    @Override
    public String toString() {
        return "Settings[" + prefix + "*]";
    }
}
