package dev.rollcall.spring.autoconfigure;

import dev.rollcall.api.RollcallConfig;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Rollcall's configuration as a Spring application sees it: {@link RollcallConfig#load()} (the
 * {@code rollcall.properties} files, {@code -Drollcall.config}, system properties, {@code ROLLCALL_*}
 * environment variables) with every {@code rollcall.*} key of the Spring {@code Environment} on top
 * (application.yml or .properties, profiles, command-line arguments, test properties), each with
 * the value Spring resolves for it, so Spring's precedence holds (an environment variable still
 * beats application.yml). The keys go to core as they are, so core reads and validates them: the
 * same names, defaults and errors as in {@code rollcall.properties}. A YAML list
 * ({@code endpoints: [a, b]}, stored by Spring as {@code endpoints[0]}, {@code endpoints[1]})
 * becomes core's comma-separated value.
 */
final class SpringRollcallConfig {

    private static final Pattern INDEXED = Pattern.compile("^(.*)\\[(\\d+)]$");

    private SpringRollcallConfig() {
    }

    static RollcallConfig from(ConfigurableEnvironment environment) {
        // name -> origin; the first source that names a key is the one whose value Spring returns.
        Map<String, String> origins = new TreeMap<>();
        Map<String, TreeMap<Integer, String>> lists = new TreeMap<>();
        for (PropertySource<?> source : environment.getPropertySources()) {
            if (!(source instanceof EnumerablePropertySource<?> names)
                    || ConfigurationPropertySources.isAttachedConfigurationPropertySource(source)
                    // ROLLCALL_PROBE_TIMEOUT & co: core reads them itself, key by key, as without Spring.
                    || StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME.equals(source.getName())) {
                continue;
            }
            boolean system = StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(source.getName());
            for (String name : names.getPropertyNames()) {
                // -Drollcall.config names a file for RollcallConfig.load(): not a key.
                if (!name.startsWith("rollcall.") || (system && name.equals(RollcallConfig.CONFIG_PROPERTY))) {
                    continue;
                }
                Matcher m = INDEXED.matcher(name);
                if (m.matches()) {
                    lists.computeIfAbsent(m.group(1), k -> new TreeMap<>())
                            .putIfAbsent(Integer.parseInt(m.group(2)), name);
                    origins.putIfAbsent(m.group(1), source.getName());
                } else {
                    origins.putIfAbsent(name, source.getName());
                }
            }
        }
        RollcallConfig config = RollcallConfig.load();
        for (Map.Entry<String, String> e : origins.entrySet()) {
            String key = e.getKey();
            String value = environment.getProperty(key);
            if (value == null && lists.containsKey(key)) {
                StringBuilder joined = new StringBuilder();
                for (String item : lists.get(key).values()) {
                    String v = environment.getProperty(item);
                    if (v != null) {
                        joined.append(joined.length() == 0 ? "" : ",").append(v);
                    }
                }
                value = joined.toString();
            }
            if (value != null) {
                config = config.with(key, value, "Spring property source '" + e.getValue() + "'");
            }
        }
        return config;
    }
}
