package dev.rollcall.core.internal.settings;

import java.time.Duration;

/**
 * A duration as people read it in a log line or a reason ({@code 8d 2h}, {@code 7m 12s},
 * {@code 350ms}): its two largest units, in the units {@code rollcall.*} durations are written in.
 * Stateless and thread-safe.
 */
public final class DurationText {

    private DurationText() {
    }

    /** {@code d} in at most two units, truncated; a negative duration reads as {@code 0s}. */
    public static String of(Duration d) {
        if (d.isNegative() || d.isZero()) {
            return "0s";
        }
        long[] amounts = {d.toDays(), d.toHoursPart(), d.toMinutesPart(), d.toSecondsPart(), d.toMillisPart()};
        String[] units = {"d", "h", "m", "s", "ms"};
        StringBuilder out = new StringBuilder();
        int shown = 0;
        for (int i = 0; i < amounts.length && shown < 2; i++) {
            if (amounts[i] > 0) {
                out.append(shown == 0 ? "" : " ").append(amounts[i]).append(units[i]);
                shown++;
            } else if (shown > 0) {
                break; // "2h" rather than "2h 0m 5s": the second unit is the next one or none
            }
        }
        return shown == 0 ? "0s" : out.toString(); // below a millisecond
    }
}
