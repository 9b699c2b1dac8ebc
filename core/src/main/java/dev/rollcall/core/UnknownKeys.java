package dev.rollcall.core;

import dev.rollcall.api.ConfigurationException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports {@code rollcall.*} keys that nothing read once the resolver is built: a typo is an error
 * that names the nearest known key; keys of a backend or policy that is not selected are only
 * logged, so that one file can keep settings for several.
 */
final class UnknownKeys {

    private static final Logger log = LoggerFactory.getLogger(UnknownKeys.class);

    private UnknownKeys() {
    }

    static void check(RollcallConfig config, String discoveryType, String policyType) {
        Set<String> known = config.readKeys();
        List<String> unknown = new ArrayList<>();
        for (String key : config.values().keySet()) {
            if (!key.startsWith("rollcall.") || config.wasRead(key)) {
                continue;
            }
            String inactive = inactiveScope(key, "rollcall.discovery.", discoveryType);
            if (inactive == null) {
                inactive = inactiveScope(key, "rollcall.policy.", policyType);
            }
            if (inactive != null) {
                log.warn("{} ignored: it configures {}, which is not selected", key, inactive);
                continue;
            }
            String nearest = Nearest.of(key, known);
            unknown.add(key + " (" + config.origin(key) + ")"
                    + (nearest == null ? "" : ": did you mean " + nearest + "?"));
        }
        for (String name : config.environment().keySet()) {
            if (name.startsWith("ROLLCALL_") && !name.equals(RollcallConfig.CONFIG_ENV)
                    && known.stream().noneMatch(k -> RollcallConfig.envName(k).equals(name))) {
                log.warn("environment variable {} matches no Rollcall key and is ignored", name);
            }
        }
        if (!unknown.isEmpty()) {
            throw new ConfigurationException(unknown.get(0).split(" ")[0],
                    "unknown Rollcall configuration key" + (unknown.size() > 1 ? "s" : "") + ": "
                            + String.join("; ", unknown));
        }
    }

    /** "discovery type 'etcd'" when {@code key} belongs to a type other than the selected one. */
    private static String inactiveScope(String key, String prefix, String selected) {
        if (!key.startsWith(prefix)) {
            return null;
        }
        String rest = key.substring(prefix.length());
        int dot = rest.indexOf('.');
        if (dot <= 0) {
            return null;
        }
        String type = rest.substring(0, dot);
        return type.equals(selected) ? null : prefix.substring("rollcall.".length(), prefix.length() - 1)
                + " type '" + type + "'";
    }
}
