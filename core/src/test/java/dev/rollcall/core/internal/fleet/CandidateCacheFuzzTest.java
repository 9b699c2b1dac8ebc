package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.rollcall.api.PeerText;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Timeout;

/**
 * The candidate cache file is read back at start-up, whatever a crash, a disk or another program
 * left in it: any text is a set that renders back to the same set, or an
 * {@link IllegalArgumentException} whose message (logged as the reason the file is ignored) is
 * escaped and bounded.
 */
class CandidateCacheFuzzTest {

    /** PeerText keeps at most 256 characters of a text, each at most 6 once escaped: no message grows with its input. */
    private static final int MAX_MESSAGE_CHARS = 2048;

    @FuzzTest
    @Timeout(30)
    void cacheFileTextRoundTripsOrIsIgnoredWithAReason(byte[] input) {
        // An odd first byte closes the rest with a correct 'end' line, so that the fuzzer reaches the
        // lines past the checksum; an even one hands the rest over as it is.
        boolean sealed = input.length > 0 && (input[0] & 1) == 1;
        String text = new String(input, Math.min(1, input.length), Math.max(0, input.length - 1), StandardCharsets.UTF_8);
        if (sealed) {
            text = seal(text);
        }
        CandidateCache.Loaded loaded;
        try {
            loaded = CandidateCache.parse(text, 1000);
        } catch (IllegalArgumentException e) {
            assertThat(PeerText.isClean(e.getMessage())).as("escaped: %s", PeerText.escape(e.getMessage())).isTrue();
            assertThat(e.getMessage().length()).as("bounded").isLessThanOrEqualTo(MAX_MESSAGE_CHARS);
            return;
        }
        assertThat(loaded.candidates()).hasSizeLessThanOrEqualTo(1000);
        String rendered = CandidateCache.render(loaded.candidates(), loaded.writtenAt());
        assertThat(CandidateCache.parse(rendered, 1000)).isEqualTo(loaded);
    }

    /** {@code body} with a newline if it lacks one, then an 'end' line counting its endpoint lines, with its CRC-32. */
    private static String seal(String body) {
        if (!body.endsWith("\n")) {
            body += "\n";
        }
        long lines = body.chars().filter(c -> c == '\n').count();
        CRC32 crc = new CRC32();
        crc.update(body.getBytes(StandardCharsets.UTF_8));
        return body + "end " + Math.max(0, lines - 2) + " " + Long.toHexString(crc.getValue()) + "\n";
    }
}
