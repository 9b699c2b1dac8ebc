package dev.rollcall.api;

/**
 * The one syntax of a comma-separated list of capabilities or requirements (a discovery label, the
 * command line, a {@code rollcall:} target, the fleet API): blank is none; more than the kind's
 * bound, or an empty item (a trailing or doubled comma), is refused naming the list (escaped,
 * bounded) and the item's place. Package-private; pure functions.
 */
final class CommaList {

    private static final String[] NONE = new String[0];

    private CommaList() {
    }

    /**
     * The items of {@code text}, not yet read one by one; none when it is blank.
     *
     * @param kind what the items are, plural ({@code capabilities}), for the messages
     * @param max  the most items
     */
    static String[] split(String text, String kind, int max) {
        if (text.isBlank()) {
            return NONE;
        }
        String[] parts = text.split(",", -1);
        if (parts.length > max) {
            throw new IllegalArgumentException(parts.length + " " + kind + " (at most " + max + ")");
        }
        for (int i = 0; i < parts.length; i++) {
            // Said here, with its place: the item alone would only say that a name is empty.
            if (parts[i].isBlank()) {
                throw new IllegalArgumentException(kind + " '" + PeerText.escape(text, 80) + "': item " + (i + 1)
                        + " of " + parts.length + " is empty");
            }
        }
        return parts;
    }
}
