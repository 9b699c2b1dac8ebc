package dev.rollcall.discovery.consul;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;

/**
 * The agent's health answer is written by whoever can register a service: any body is refused as a
 * whole with an {@link IllegalArgumentException} (escaped, bounded), or yields endpoints whose URL
 * reads back and whose claimed version obeys {@link WorkerEndpoint#versionLabelProblem}, with every
 * entry left out named in an escaped, bounded line.
 */
class HealthEntriesFuzzTest {

    /** PeerText keeps at most 256 characters of a text, each at most 6 once escaped: no line grows with its input. */
    private static final int MAX_MESSAGE_CHARS = 4096;

    @FuzzTest
    @Timeout(30)
    void healthAnswerBecomesEndpointsAndNamedSkips(byte[] input) {
        String body = new String(input, StandardCharsets.UTF_8);
        HealthEntries.Parsed parsed;
        try {
            parsed = HealthEntries.parse(body, "version");
        } catch (IllegalArgumentException e) {
            assertClean(e.getMessage());
            return;
        }
        Stream.of(parsed.skipped(), parsed.duplicates(), parsed.nodeDown()).flatMap(List::stream)
                .forEach(HealthEntriesFuzzTest::assertClean);
        for (WorkerEndpoint e : parsed.endpoints()) {
            assertThat(WorkerEndpoint.parse(e.url())).isEqualTo(e.withLabels(Map.of()));
            String claimed = e.labels().get(WorkerEndpoint.VERSION_LABEL);
            if (claimed != null) {
                assertThat(WorkerEndpoint.versionLabelProblem(claimed)).as("claimed version %s", PeerText.escape(claimed))
                        .isNull();
            }
        }
    }

    private static void assertClean(String line) {
        assertThat(PeerText.isClean(line)).as("escaped: %s", PeerText.escape(line)).isTrue();
        assertThat(line.length()).as("bounded").isLessThanOrEqualTo(MAX_MESSAGE_CHARS);
    }
}
