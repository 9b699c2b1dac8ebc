package dev.rollcall.api;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the duration syntax of {@link Settings#duration}. */
final class Durations {

    private static final Pattern WITH_UNIT = Pattern.compile("(\\d{1,18})\\s*(ns|us|ms|s|m|h|d)");

    private Durations() {
    }

    /** The duration, or {@code null} when {@code text} is not one. */
    static Duration parse(String text) {
        String s = text.strip().toLowerCase(Locale.ROOT);
        Matcher m = WITH_UNIT.matcher(s);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            try {
                return switch (m.group(2)) {
                    case "ns" -> Duration.ofNanos(n);
                    case "us" -> Duration.ofNanos(Math.multiplyExact(n, 1000L));
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
            } catch (ArithmeticException e) {
                return null;
            }
        }
        if (s.startsWith("pt") || s.startsWith("p")) {
            try {
                return Duration.parse(s.toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException e) {
                return null;
            }
        }
        return null;
    }
}
