package dev.rollcall.api;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The kind of value a {@link SettingKey} holds: how its text is parsed, how a value is written back
 * as text, and how two values compare (for bounds). The five kinds are the constants below.
 * Immutable and thread-safe.
 *
 * @param <T> the Java type of the value
 */
public final class SettingType<T> {

    /** Free text, stripped. */
    public static final SettingType<String> TEXT = new SettingType<>("text", "text", s -> s, s -> s, null);
    /** A whole number ({@code int}). */
    public static final SettingType<Integer> WHOLE_NUMBER = new SettingType<>("whole number", "a whole number",
            SettingType::parseInt, String::valueOf, Comparator.<Integer>naturalOrder());
    /** {@code true} or {@code false}, any case. */
    public static final SettingType<Boolean> BOOLEAN = new SettingType<>("boolean", "true or false",
            SettingType::parseBoolean, String::valueOf, null);
    /**
     * A duration with a unit ({@code 250ms}, {@code 2s}, {@code 5m}, {@code 1h}, {@code 1d}) or in
     * ISO-8601 ({@code PT2S}); never negative. A bare number is refused: its unit would be a guess.
     */
    public static final SettingType<Duration> DURATION = new SettingType<>("duration",
            "a duration with a unit such as 250ms, 2s, 5m, 1h or PT2S", SettingType::parseDuration,
            SettingType::durationText, Comparator.<Duration>naturalOrder());
    /** A comma-separated list, items stripped, empty items dropped. */
    public static final SettingType<List<String>> LIST = new SettingType<>("list", "a comma-separated list",
            SettingType::parseList, l -> String.join(",", l), null);

    private final String name;
    private final String expected;
    private final Function<String, T> parse;
    private final Function<T, String> text;
    private final Comparator<T> order;

    private SettingType(String name, String expected, Function<String, T> parse, Function<T, String> text,
                        Comparator<T> order) {
        this.name = name;
        this.expected = expected;
        this.parse = parse;
        this.text = text;
        this.order = order;
    }

    /** The name shown in docs and metadata: {@code duration}, {@code whole number}, ... */
    public String name() {
        return name;
    }

    /** What a well-formed value of this kind looks like, for messages. */
    String expected() {
        return expected;
    }

    /** The value of {@code text}, or {@code null} when it is not one of this kind. */
    T parse(String text) {
        return parse.apply(text.strip());
    }

    /** {@code value} as a configuration file would write it; {@link #parse} reads it back. */
    public String text(T value) {
        return text.apply(value);
    }

    /** How values compare for bounds, or {@code null} when this kind has no order. */
    Comparator<T> order() {
        return order;
    }

    private static Integer parseInt(String s) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static Boolean parseBoolean(String s) {
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> null;
        };
    }

    private static Duration parseDuration(String s) {
        Duration d = Durations.parse(s);
        return d == null || d.isNegative() ? null : d;
    }

    /** The shortest exact form with one unit: {@code 2s}, {@code 250ms}, {@code 10m}. */
    static String durationText(Duration d) {
        if (d.getNano() % 1_000_000 != 0) {
            return d.toString();
        }
        long millis = d.toMillis();
        if (millis % 1000 != 0) {
            return millis + "ms";
        }
        long seconds = millis / 1000;
        if (seconds == 0) {
            return "0s";
        }
        if (seconds % 86_400 == 0) {
            return seconds / 86_400 + "d";
        }
        if (seconds % 3600 == 0) {
            return seconds / 3600 + "h";
        }
        return seconds % 60 == 0 ? seconds / 60 + "m" : seconds + "s";
    }

    private static List<String> parseList(String s) {
        List<String> items = new ArrayList<>();
        for (String item : s.split(",")) {
            String stripped = item.strip();
            if (!stripped.isEmpty()) {
                items.add(stripped);
            }
        }
        return List.copyOf(items);
    }

    @Override
    public String toString() {
        return name;
    }
}
