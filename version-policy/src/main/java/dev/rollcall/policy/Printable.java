package dev.rollcall.policy;

import dev.rollcall.api.PeerText;

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

    /** {@code text} in single quotes, escaped and cut as {@link PeerText#escape(CharSequence, int)} does. */
    static String quote(String text) {
        return "'" + escape(text) + "'";
    }

    /** {@code text} escaped and cut as {@link PeerText#escape(CharSequence, int)} does; {@code ''} when empty. */
    static String bare(String text) {
        return text.isEmpty() ? "''" : escape(text);
    }

    private static String escape(String text) {
        // PeerText's escaping, not only ISO controls: a bidi override or a line separator in a version
        // would still reorder or break the line a reason ends up in.
        return PeerText.escape(text, MAX_LENGTH);
    }
}
