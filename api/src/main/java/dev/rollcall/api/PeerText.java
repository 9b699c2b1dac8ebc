package dev.rollcall.api;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one rule for text that comes from outside the process (a worker's error message, a backend's
 * value, a URL someone wrote) before it reaches a reason, a log line, an exception or a terminal:
 * control characters and line breaks are escaped, so that the text cannot start a line of its own
 * or move a terminal's cursor, and its length is bounded, so that a peer cannot fill a log.
 *
 * <p>Escaped: C0 controls and DEL ({@code \n}, {@code \r}, {@code \t} by name, the others as
 * {@code \u001b}), C1 controls, the Unicode line and paragraph separators, the bidirectional
 * overrides and isolates that reorder how a line reads (U+202A–U+202E, U+2066–U+2069) and the
 * invisible direction marks (U+200E, U+200F, U+061C), and a surrogate without its pair. Everything
 * else, non-ASCII letters included, is kept. Pure functions; thread-safe.
 *
 * <p>A URL someone wrote may carry a password: {@link #maskUserInfo} hides it, and is the one place
 * that does.
 */
public final class PeerText {

    /** The bound {@link #escape(CharSequence)} applies: enough for a reason, short enough for a log line. */
    public static final int DEFAULT_MAX_CHARS = 256;

    /** Leading white space, then an optional {@code scheme:} and {@code //}: what comes before an authority. */
    private static final Pattern AUTHORITY_PREFIX = Pattern.compile("\\s*(?:(?:[A-Za-z][A-Za-z0-9+.-]*:)?//)?");

    private PeerText() {
    }

    /** {@code text} escaped and cut to {@value #DEFAULT_MAX_CHARS} characters; {@code "null"} for null. */
    public static String escape(CharSequence text) {
        return escape(text, DEFAULT_MAX_CHARS);
    }

    /**
     * {@code text} escaped and cut to at most {@code maxChars} characters of the original, after which
     * {@code "...(N more)"} says how much was left out; {@code "null"} for null.
     *
     * @throws IllegalArgumentException when {@code maxChars} is below 1
     */
    public static String escape(CharSequence text, int maxChars) {
        if (maxChars < 1) {
            throw new IllegalArgumentException("maxChars " + maxChars + " is below 1");
        }
        if (text == null) {
            return "null";
        }
        int n = text.length();
        int keep = Math.min(n, maxChars);
        if (keep > 0 && keep < n && Character.isHighSurrogate(text.charAt(keep - 1))) {
            keep--; // never split a surrogate pair
        }
        if (keep == n && isClean(text)) {
            return text.toString();
        }
        StringBuilder sb = new StringBuilder(keep + 16);
        for (int i = 0; i < keep; i++) {
            char c = text.charAt(i);
            switch (c) {
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (needsEscape(text, i)) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        if (keep < n) {
            sb.append("...(").append(n - keep).append(" more)");
        }
        return sb.toString();
    }

    /** Whether {@code text} holds nothing {@link #escape} would change (its length aside). */
    public static boolean isClean(CharSequence text) {
        return indexOfUnclean(text) < 0;
    }

    /**
     * The index of the first character of {@code text} that {@link #escape} would escape, or -1
     * when there is none: for a check that refuses such text and says where.
     */
    public static int indexOfUnclean(CharSequence text) {
        for (int i = 0, n = text.length(); i < n; i++) {
            if (needsEscape(text, i)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * {@code text} with its user info hidden: every character between the start of the authority
     * (after {@code scheme://}, {@code //}, or the start) and the text's last {@code @} becomes
     * {@code ***}, whatever it is ({@code /}, {@code ?}, {@code #}, {@code :}, {@code %40}, another
     * {@code @}): a password may hold any of them, and a mask that stops at one shows the rest.
     * Text without {@code @} and an empty user info ({@code grpc://@host}) are returned as they are.
     * Hides more than the user info when the text has an {@code @} after it (in a path, or in a list
     * of URLs): never less. Not escaped: pass the result to {@link #escape}. {@code "null"} for null.
     */
    public static String maskUserInfo(CharSequence text) {
        if (text == null) {
            return "null";
        }
        String s = text.toString();
        int at = s.lastIndexOf('@');
        if (at < 0) {
            return s;
        }
        int start = authorityStart(s, at);
        return start >= at ? s : s.substring(0, start) + "***" + s.substring(at);
    }

    /** Where the authority begins: after the text's leading {@code scheme://} or {@code //} before {@code at}, if any. */
    private static int authorityStart(String s, int at) {
        Matcher m = AUTHORITY_PREFIX.matcher(s).region(0, at);
        return m.lookingAt() ? m.end() : 0;
    }

    private static boolean needsEscape(CharSequence text, int i) {
        char c = text.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1));
        }
        if (Character.isLowSurrogate(c)) {
            return i == 0 || !Character.isHighSurrogate(text.charAt(i - 1));
        }
        return c < 0x20 || c == 0x7f
                || (c >= 0x80 && c < 0xa0)                 // C1 controls (0x9b is a terminal's CSI)
                || c == '\u2028' || c == '\u2029'         // line and paragraph separators
                || (c >= '\u202a' && c <= '\u202e')       // bidi embeddings and overrides
                || (c >= '\u2066' && c <= '\u2069')       // bidi isolates
                || c == '\u200e' || c == '\u200f' || c == '\u061c'; // direction marks
    }
}
