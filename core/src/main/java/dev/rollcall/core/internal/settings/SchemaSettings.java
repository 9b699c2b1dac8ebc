package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.api.registry.KeyPaths;
import dev.rollcall.core.internal.catalog.CoreKeys;
import java.util.Map;
import java.util.TreeMap;

/**
 * Schema fetching and routing keys ({@code rollcall.schemas.*}, {@code rollcall.keys.*}), validated.
 * Defaults and bounds are {@link CoreKeys}'; no key paths unless set.
 */
public record SchemaSettings(boolean fetch, int maxResponseBytes, KeyPaths keys) {


    /** Whether anything schema-related is on: fetching, or key paths that need schemas. */
    public boolean used() {
        return fetch || !keys.asMap().isEmpty();
    }

    /**
     * The settings of {@code config}; {@code givenKeyPaths}, when not null, instead of {@code rollcall.keys.*}.
     *
     * @throws ConfigurationException naming the key, the value and what was expected
     */
    static SchemaSettings read(RollcallConfig config, KeyPaths givenKeyPaths) {
        Settings root = config.settings();
        return new SchemaSettings(root.get(CoreKeys.FETCH_SCHEMAS), root.get(CoreKeys.SCHEMAS_MAX_RESPONSE_BYTES),
                givenKeyPaths != null ? givenKeyPaths : keyPaths(config));
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
