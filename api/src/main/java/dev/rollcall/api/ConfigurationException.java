package dev.rollcall.api;

import java.util.Locale;

/**
 * Configuration that Rollcall cannot use: a missing or malformed value, an unknown key, or a
 * {@code type} that no module on the classpath provides.
 *
 * <p>Thrown at start-up, never later. The message names the full key, the value (masked when the
 * key looks secret) and what was expected; {@link #key()} gives the key alone.
 */
public final class ConfigurationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String key;

    public ConfigurationException(String key, String message) {
        super(message);
        this.key = key;
    }

    public ConfigurationException(String key, String message, Throwable cause) {
        super(message, cause);
        this.key = key;
    }

    /** {@code key=value: expected ...}, with the value masked when the key looks secret. */
    public static ConfigurationException invalid(String key, String value, String expected) {
        return new ConfigurationException(key, key + "=" + printable(key, value) + ": expected " + expected);
    }

    /** A required key that has no value. */
    public static ConfigurationException missing(String key, String expected) {
        return new ConfigurationException(key, key + " is not set: expected " + expected);
    }

    /** The full key at fault, e.g. {@code rollcall.probe.timeout}. */
    public String key() {
        return key;
    }

    /** The value as it may appear in a message: masked when the key names a secret. */
    public static String printable(String key, String value) {
        String k = key.toLowerCase(Locale.ROOT);
        if (k.contains("password") || k.contains("token") || k.contains("secret")
                || k.endsWith(".key") || k.contains("private")) {
            return "****";
        }
        return "'" + value + "'";
    }
}
