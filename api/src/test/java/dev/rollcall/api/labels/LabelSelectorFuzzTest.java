package dev.rollcall.api.labels;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.rollcall.api.PeerText;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Timeout;

/**
 * Selectors come from settings, the console and the fleet API: any text is a selector whose
 * normalised form parses back to it, or an {@link IllegalArgumentException} naming the position,
 * escaped and bounded.
 */
class LabelSelectorFuzzTest {

    /** PeerText keeps at most 256 characters of a text, each at most 6 once escaped: no message grows with its input. */
    private static final int MAX_MESSAGE_CHARS = 2048;

    @FuzzTest
    @Timeout(30)
    void selectorTextRoundTripsOrIsRefusedAtAPosition(byte[] input) {
        String text = new String(input, StandardCharsets.UTF_8);
        LabelSelector parsed;
        try {
            parsed = LabelSelector.parse(text);
        } catch (IllegalArgumentException e) {
            assertThat(e.getMessage()).startsWith("at ");
            assertThat(PeerText.isClean(e.getMessage())).as("escaped: %s", PeerText.escape(e.getMessage())).isTrue();
            assertThat(e.getMessage().length()).as("bounded").isLessThanOrEqualTo(MAX_MESSAGE_CHARS);
            return;
        }
        assertThat(LabelSelector.parse(parsed.toString())).isEqualTo(parsed);
    }
}
