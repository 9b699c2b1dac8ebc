package dev.rollcall.core.internal.settings;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.SettingKey;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The values of catalog keys given to {@code WorkerResolver.Builder}: the top layer of the
 * configuration, whose origin is {@value #ORIGIN}. Each is checked at once by its key's own
 * declaration, so the builder repeats no default and no bound, and the settings readers read one
 * source. Not thread-safe (a builder's).
 */
public final class BuilderValues {

    /** How messages name a value given in code. */
    public static final String ORIGIN = "WorkerResolver.Builder";

    private final Map<String, String> values = new LinkedHashMap<>();

    /**
     * Sets {@code key} to {@code value}.
     *
     * @throws IllegalArgumentException naming the key, the value and what was expected, when the
     *                                  value is outside the key's bounds
     * @throws NullPointerException     naming the key when {@code value} is null
     */
    public <T> void put(SettingKey<T> key, T value) {
        values.put(key.name(), key.type().text(key.check(value, ORIGIN)));
    }

    /** The value given for {@code key}, or {@code null}. */
    public <T> T get(SettingKey<T> key) {
        String text = values.get(key.name());
        return text == null ? null : key.parse(text);
    }

    /** {@code config} with these values on top, each named as coming from {@value #ORIGIN}. */
    public RollcallConfig over(RollcallConfig config) {
        RollcallConfig layered = config;
        for (Map.Entry<String, String> e : values.entrySet()) {
            layered = layered.with(e.getKey(), e.getValue(), ORIGIN);
        }
        return layered;
    }
}
