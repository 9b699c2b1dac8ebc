package dev.rollcall.api;

import java.util.Locale;

/**
 * Configuration that Rollcall cannot use: a missing or malformed value, an unknown key, or a
 * {@code type} that no module on the classpath provides.
 *
 * <p>Thrown at start-up, never later. The message names the full key, the value (masked when the
 * key looks secret, a URL's user info always masked; see {@link #printable}) and what was expected;
 * {@link #key()} gives the key alone.
 */
public final class ConfigurationException extends RuntimeException {

    private static final long serialVersionUID = 1L;
    /** How much of a value a message shows: a list of endpoints may be long, a log line should not be. */
    private static final int MAX_SHOWN_CHARS = 1024;

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

    /**
     * The value as it may appear in a message: {@code ****} when the key names a secret; otherwise
     * quoted, with the user info of a URL in it masked ({@link PeerText#maskUserInfo}: an endpoint
     * written {@code http://user:password@host} shows {@code http://***@host}), escaped and
     * bounded to {@value #MAX_SHOWN_CHARS} characters ({@link PeerText#escape(CharSequence, int)}).
     */
    public static String printable(String key, String value) {
        String k = key.toLowerCase(Locale.ROOT);
        if (k.contains("password") || k.contains("token") || k.contains("secret")
                || k.endsWith(".key") || k.contains("private")) {
            return "****";
        }
        return "'" + PeerText.escape(PeerText.maskUserInfo(value), MAX_SHOWN_CHARS) + "'";
    }
}
