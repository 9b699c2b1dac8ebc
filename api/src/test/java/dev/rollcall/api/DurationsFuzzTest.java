package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Timeout;

/**
 * Durations come from properties files, system properties and the environment: any text is a
 * duration that prints (ISO-8601) and parses back to itself, or a {@link ConfigurationException}
 * that names the key and shows the value escaped and bounded.
 */
class DurationsFuzzTest {

    /** A configuration error shows at most 1,024 characters of a value, each at most 6 once escaped: no message grows with its input. */
    private static final int MAX_MESSAGE_CHARS = 8192;

    private static final String KEY = "probe.timeout";

    @FuzzTest
    @Timeout(30)
    void durationTextRoundTripsOrIsRefusedNamingTheKey(byte[] input) {
        String text = new String(input, StandardCharsets.UTF_8);
        Duration parsed = Durations.parse(text);
        if (parsed != null) {
            assertThat(Durations.parse(parsed.toString())).isEqualTo(parsed);
        }
        Settings settings = Settings.of(Map.of(KEY, text));
        try {
            Duration read = settings.duration(KEY, Duration.ZERO);
            assertThat(read.isNegative()).isFalse();
        } catch (ConfigurationException e) {
            assertThat(e.key()).endsWith(KEY);
            assertThat(e.getMessage()).contains(KEY);
            assertThat(PeerText.isClean(e.getMessage())).as("escaped: %s", PeerText.escape(e.getMessage())).isTrue();
            assertThat(e.getMessage().length()).as("bounded").isLessThanOrEqualTo(MAX_MESSAGE_CHARS);
        }
    }
}
