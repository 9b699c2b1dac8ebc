package dev.rollcall.api;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * A typed, read-only view over Rollcall's configuration, scoped to one prefix.
 *
 * <p>A provider receives the view for its own keys: the {@code static} discovery backend gets
 * {@code rollcall.discovery.static.*} and reads {@code endpoints}, which is the full key
 * {@code rollcall.discovery.static.endpoints}. Typed getters reject malformed values with a
 * {@link ConfigurationException} that names the full key, the value and what was expected; they
 * never fall back to a default silently.
 *
 * <p>Rollcall reports keys that nothing read (with the nearest known key), so a provider must read
 * every key it supports while it is created, even those it only needs later.
 *
 * <p>Implementations are immutable and thread-safe.
 */
public interface Settings {

    /** The raw value of {@code key} (relative to this view), stripped; absent when unset or blank. */
    Optional<String> raw(String key);

    /** The full key for {@code key}, as it appears in properties files and messages. */
    String fullKey(String key);

    /** The view of the keys under {@code prefix} (relative to this view, e.g. {@code "etcd."}). */
    Settings scope(String prefix);

    /** A view over a plain map of full keys, for tests and programmatic configuration. */
    static Settings of(Map<String, String> values) {
        return over(Map.copyOf(values)::get);
    }

    /**
     * A view over any source of values: {@code lookup} takes a full key and returns its value or
     * {@code null}. It must be thread-safe.
     */
    static Settings over(Function<String, String> lookup) {
        return new LookupSettings("", Objects.requireNonNull(lookup, "lookup"));
    }

    /**
     * The value of {@code key}, checked against its declared bounds, or its default when unset.
     * {@code key}'s full name must lie under this view.
     *
     * @throws ConfigurationException naming the key, the value and what was expected; or, when
     *                                {@code key} is required, that it is not set
     * @throws IllegalStateException  when {@code key} has no default (use {@link #find})
     */
    default <T> T get(SettingKey<T> key) {
        Optional<T> value = find(key);
        if (value.isPresent()) {
            return value.get();
        }
        if (key.defaultValue() != null) {
            return key.defaultValue();
        }
        if (key.isRequired()) {
            throw ConfigurationException.missing(key.name(), key.expected());
        }
        throw new IllegalStateException(key.name() + " has no default: read it with find()");
    }

    /** The value of {@code key} when set, checked against its declared bounds; empty when unset. */
    default <T> Optional<T> find(SettingKey<T> key) {
        String prefix = fullKey("");
        if (!key.name().startsWith(prefix)) {
            throw new IllegalArgumentException(key.name() + " is outside this view (" + prefix + "*)");
        }
        return raw(key.name().substring(prefix.length())).map(key::parse);
    }

    /** A required string. */
    default String string(String key) {
        return raw(key).orElseThrow(() -> ConfigurationException.missing(fullKey(key), "a value"));
    }

    /** A string, or {@code defaultValue} when unset. */
    default String string(String key, String defaultValue) {
        return raw(key).orElse(defaultValue);
    }

    /** A whole number within {@code [min, max]}, or {@code defaultValue} when unset. */
    default int integer(String key, int defaultValue, int min, int max) {
        Optional<String> value = raw(key);
        if (value.isEmpty()) {
            return defaultValue;
        }
        String expected = "a whole number from " + min + " to " + max;
        int parsed;
        try {
            parsed = Integer.parseInt(value.get());
        } catch (NumberFormatException e) {
            throw ConfigurationException.invalid(fullKey(key), value.get(), expected);
        }
        if (parsed < min || parsed > max) {
            throw ConfigurationException.invalid(fullKey(key), value.get(), expected);
        }
        return parsed;
    }

    /** {@code true} or {@code false} (any case), or {@code defaultValue} when unset. */
    default boolean bool(String key, boolean defaultValue) {
        Optional<String> value = raw(key);
        if (value.isEmpty()) {
            return defaultValue;
        }
        return switch (value.get().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw ConfigurationException.invalid(fullKey(key), value.get(), "true or false");
        };
    }

    /**
     * A duration written with a unit ({@code 250ms}, {@code 2s}, {@code 5m}, {@code 1h}, {@code 1d})
     * or in ISO-8601 ({@code PT2S}), or {@code defaultValue} when unset. A bare number is rejected:
     * its unit would be a guess.
     */
    default Duration duration(String key, Duration defaultValue) {
        Optional<String> value = raw(key);
        if (value.isEmpty()) {
            return defaultValue;
        }
        Duration parsed = Durations.parse(value.get());
        if (parsed == null) {
            throw ConfigurationException.invalid(fullKey(key), value.get(),
                    "a duration with a unit such as 250ms, 2s, 5m, 1h or PT2S");
        }
        if (parsed.isNegative()) {
            throw ConfigurationException.invalid(fullKey(key), value.get(), "a duration of zero or more");
        }
        return parsed;
    }

    /** A duration greater than zero, or {@code defaultValue} when unset. */
    default Duration positiveDuration(String key, Duration defaultValue) {
        Optional<String> value = raw(key);
        if (value.isEmpty()) {
            return defaultValue;
        }
        Duration parsed = Durations.parse(value.get());
        if (parsed == null) {
            return duration(key, defaultValue); // throws the message for malformed durations
        }
        if (parsed.isZero() || parsed.isNegative()) {
            throw ConfigurationException.invalid(fullKey(key), value.get(), "a duration greater than zero");
        }
        return parsed;
    }

    /** A comma-separated list, each item stripped, empty items dropped; empty when unset. */
    default List<String> list(String key) {
        Optional<String> value = raw(key);
        if (value.isEmpty()) {
            return List.of();
        }
        List<String> items = new ArrayList<>();
        for (String item : value.get().split(",")) {
            String s = item.strip();
            if (!s.isEmpty()) {
                items.add(s);
            }
        }
        return List.copyOf(items);
    }
}
