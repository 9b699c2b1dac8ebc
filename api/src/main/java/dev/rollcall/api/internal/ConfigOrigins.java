package dev.rollcall.api.internal;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;

/**
 * Adds where a bad value came from to a {@link ConfigurationException}: the readers deep inside
 * know the key and the value, only the place that holds the {@link RollcallConfig} knows the source
 * (a file, a Spring property source, an environment variable, {@code WorkerResolver.Builder}).
 */
public final class ConfigOrigins {

    private static final String FROM = " (from ";

    private ConfigOrigins() {
    }

    /**
     * {@code e} with {@code (from <origin>)} appended when its key has a value in {@code config};
     * {@code e} itself when the key is unset (a missing key has no source) or the message names the
     * source already (an unknown key's).
     */
    public static ConfigurationException named(ConfigurationException e, RollcallConfig config) {
        String key = e.key();
        if (key == null || e.getMessage() == null || e.getMessage().contains(FROM)
                || !key.startsWith("rollcall.")) {
            return e;
        }
        String origin = config.origin(key);
        if ("default".equals(origin) || e.getMessage().contains("(" + origin + ")")) {
            return e;
        }
        ConfigurationException named = new ConfigurationException(key, e.getMessage() + FROM + origin + ")",
                e.getCause());
        named.setStackTrace(e.getStackTrace());
        return named;
    }
}
