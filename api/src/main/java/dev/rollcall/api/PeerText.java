package dev.rollcall.api;

/**
 * The one rule for text that comes from outside the process (a worker's error message, a backend's
 * value, a URL someone wrote) before it reaches a reason, a log line, an exception or a terminal:
 * control characters and line breaks are escaped, so that the text cannot start a line of its own
 * or move a terminal's cursor, and its length is bounded, so that a peer cannot fill a log.
 *
 * <p>Escaped: C0 controls and DEL ({@code \n}, {@code \r}, {@code \t} by name, the others as
 * {@code \u001b}), C1 controls, the Unicode line and paragraph separators, and the bidirectional
 * overrides and isolates that reorder how a line reads (U+202A–U+202E, U+2066–U+2069). Everything
 * else, non-ASCII letters included, is kept. Pure functions; thread-safe.
 */
public final class PeerText {

    /** The bound {@link #escape(CharSequence)} applies: enough for a reason, short enough for a log line. */
    public static final int DEFAULT_MAX_CHARS = 256;

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
                    if (needsEscape(c)) {
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
        for (int i = 0, n = text.length(); i < n; i++) {
            char c = text.charAt(i);
            if (c == '\n' || c == '\r' || c == '\t' || needsEscape(c)) {
                return false;
            }
        }
        return true;
    }

    private static boolean needsEscape(char c) {
        return c < 0x20 || c == 0x7f
                || (c >= 0x80 && c < 0xa0)                 // C1 controls (0x9b is a terminal's CSI)
                || c == '\u2028' || c == '\u2029'         // line and paragraph separators
                || (c >= '\u202a' && c <= '\u202e')       // bidi embeddings and overrides
                || (c >= '\u2066' && c <= '\u2069');      // bidi isolates
    }
}
