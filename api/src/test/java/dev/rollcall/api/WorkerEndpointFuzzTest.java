package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Timeout;

/**
 * Endpoint URLs come from registries, files and peers: any text either becomes an endpoint whose
 * canonical URL parses back to it, or is refused with an {@link IllegalArgumentException} whose
 * message is escaped and bounded. The suite replays the committed inputs; {@code ./fuzz} fuzzes.
 */
class WorkerEndpointFuzzTest {

    /** PeerText keeps at most 256 characters of a text, each at most 6 once escaped: no message grows with its input. */
    private static final int MAX_MESSAGE_CHARS = 2048;

    @FuzzTest
    @Timeout(30)
    void endpointTextRoundTripsOrIsRefusedByName(byte[] input) {
        String text = new String(input, StandardCharsets.UTF_8);
        WorkerEndpoint parsed;
        try {
            parsed = WorkerEndpoint.parse(text);
        } catch (IllegalArgumentException e) {
            assertCleanRefusal(e, "invalid worker endpoint '");
            return;
        }
        assertThat(WorkerEndpoint.parse(parsed.url())).isEqualTo(parsed);
        assertThat(parsed.url()).startsWith(parsed.tls() ? "grpcs://" : "grpc://");
    }

    /** Backends build endpoints from a registry's host field: what the constructor takes, parse must read back. */
    @FuzzTest
    @Timeout(30)
    void endpointFromPartsRoundTripsThroughItsUrl(byte[] input) {
        int port = input.length > 1 ? ((input[0] & 0xff) << 8 | (input[1] & 0xff)) : 0;
        boolean tls = input.length > 2 && (input[2] & 1) == 1;
        String host = input.length > 3 ? new String(input, 3, input.length - 3, StandardCharsets.UTF_8) : "";
        WorkerEndpoint built;
        try {
            built = new WorkerEndpoint(host, port, tls, Map.of());
        } catch (IllegalArgumentException e) {
            assertCleanRefusal(e, "worker endpoint ");
            return;
        }
        assertThat(WorkerEndpoint.parse(built.url())).isEqualTo(built);
    }

    static void assertCleanRefusal(IllegalArgumentException e, String prefix) {
        assertThat(e.getMessage()).startsWith(prefix);
        assertThat(PeerText.isClean(e.getMessage())).as("escaped: %s", PeerText.escape(e.getMessage())).isTrue();
        assertThat(e.getMessage().length()).as("bounded").isLessThanOrEqualTo(MAX_MESSAGE_CHARS);
    }
}
