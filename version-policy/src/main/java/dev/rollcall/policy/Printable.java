package dev.rollcall.policy;

import java.util.Locale;

/**
 * Puts text that came from a worker into a rejection reason. Reasons end up in logs and status
 * output, so a version must not be able to forge a log line or flood it.
 */
final class Printable {

    private static final int MAX_LENGTH = 200;
    /** How a reason starts when the worker reported the empty version, by any policy here. */
    static final String NO_VERSION = "no version (the worker never set one)";

    private Printable() {
    }

    /** {@code text} in single quotes, control characters escaped, cut to a sane length. */
    static String quote(String text) {
        return "'" + escape(text) + "'";
    }

    /** {@code text} with control characters escaped, cut to a sane length; {@code ''} when empty. */
    static String bare(String text) {
        return text.isEmpty() ? "''" : escape(text);
    }

    private static String escape(String text) {
        StringBuilder out = new StringBuilder(Math.min(text.length(), MAX_LENGTH) + 8);
        for (int i = 0; i < text.length(); i++) {
            if (out.length() >= MAX_LENGTH) {
                return out.append("...").toString();
            }
            char c = text.charAt(i);
            switch (c) {
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (Character.isISOControl(c)) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.toString();
    }
}
