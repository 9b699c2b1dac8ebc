package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.registry.KeyPaths;
import java.util.Map;
import java.util.TreeMap;

/**
 * Schema fetching and routing keys ({@code rollcall.schemas.*}, {@code rollcall.keys.*}), validated.
 * Defaults: fetch on, 4 MiB per version's reflection answers, no key paths.
 */
public record SchemaSettings(boolean fetch, int maxResponseBytes, KeyPaths keys) {

    static final boolean DEFAULT_FETCH = true;
    static final int DEFAULT_MAX_RESPONSE_BYTES = 4 << 20;

    /** Whether anything schema-related is on: fetching, or key paths that need schemas. */
    public boolean used() {
        return fetch || !keys.asMap().isEmpty();
    }

    /**
     * The settings of {@code config}, where the overrides given in code, when set, win.
     *
     * @throws ConfigurationException naming the key, the value and what was expected
     */
    static SchemaSettings read(RollcallConfig config, ResolverOverrides given) {
        var schemas = config.settings().scope("rollcall.schemas.");
        return new SchemaSettings(
                given.fetchSchemas() != null ? given.fetchSchemas() : schemas.bool("fetch", DEFAULT_FETCH),
                schemas.integer("max-response-bytes", DEFAULT_MAX_RESPONSE_BYTES, 1024, 256 << 20),
                given.keyPaths() != null ? given.keyPaths() : keyPaths(config));
    }

    /** {@code rollcall.keys.<service>.<method>=<path>}, each checked for syntax, naming its key. */
    private static KeyPaths keyPaths(RollcallConfig config) {
        String prefix = "rollcall.keys.";
        Map<String, String> byMethod = new TreeMap<>();
        for (String key : config.values().keySet()) {
            if (key.startsWith(prefix)) {
                String value = config.settings().raw(key).orElse("");
                try {
                    KeyPaths.of(Map.of(key.substring(prefix.length()), value));
                } catch (IllegalArgumentException e) {
                    throw ConfigurationException.invalid(key, value,
                            "a field path such as order.customer_id under rollcall.keys.<service>.<method> ("
                                    + e.getMessage() + ")");
                }
                byMethod.put(key.substring(prefix.length()), value);
            }
        }
        return KeyPaths.of(byMethod);
    }
}
