package dev.rollcall.testkit.consul;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Go's {@code time.ParseDuration} syntax, which Consul uses for {@code wait}, {@code TTL} and the like. */
final class GoDuration {

    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|μs|ms|s|m|h)");

    private GoDuration() {
    }

    /** The duration, or {@code null} when {@code text} is not a Go duration. */
    static Duration parse(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        String s = text;
        boolean negative = false;
        if (s.startsWith("-") || s.startsWith("+")) {
            negative = s.startsWith("-");
            s = s.substring(1);
        }
        if (s.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = PART.matcher(s);
        BigDecimal nanos = BigDecimal.ZERO;
        int end = 0;
        while (m.find()) {
            if (m.start() != end) {
                return null;
            }
            end = m.end();
            BigDecimal value = new BigDecimal(m.group(1).endsWith(".") ? m.group(1) + "0" : m.group(1));
            long unit = switch (m.group(2)) {
                case "ns" -> 1L;
                case "us", "µs", "μs" -> 1_000L;
                case "ms" -> 1_000_000L;
                case "s" -> 1_000_000_000L;
                case "m" -> 60_000_000_000L;
                default -> 3_600_000_000_000L;
            };
            nanos = nanos.add(value.multiply(BigDecimal.valueOf(unit)));
        }
        if (end == 0 || end != s.length()) {
            return null;
        }
        Duration d = Duration.ofNanos(nanos.longValue());
        return negative ? d.negated() : d;
    }
}
