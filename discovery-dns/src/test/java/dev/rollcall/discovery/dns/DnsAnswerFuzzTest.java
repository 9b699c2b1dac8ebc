package dev.rollcall.discovery.dns;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Timeout;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Resolver;
import org.xbill.DNS.TSIG;

/**
 * A DNS answer is whatever the server (or anyone on the path of plain UDP) sends: any bytes, read
 * by dnsjava as the answer to the A, AAAA or SRV question and to the follow-up questions about SRV
 * targets, give endpoints whose URL reads back and skips named in escaped, bounded lines, or a
 * failed lookup whose message is escaped and bounded.
 *
 * <p>The first byte chooses the question (A, AAAA, SRV) and the scheme; the rest is the answer's wire form.
 */
class DnsAnswerFuzzTest {

    /** PeerText keeps at most 256 characters of a text, each at most 6 once escaped: no line grows with its input. */
    private static final int MAX_MESSAGE_CHARS = 4096;

    @FuzzTest
    @Timeout(30)
    void answerBytesBecomeEndpointsOrAFailedLookup(byte[] input) throws InterruptedException {
        if (input.length == 0) {
            return;
        }
        String type = List.of("A", "AAAA", "SRV").get((input[0] & 0x7f) % 3);
        Map<String, String> keys = new HashMap<>(Map.of(
                "rollcall.discovery.dns.name", "workers.example.com",
                "rollcall.discovery.dns.record-type", type,
                "rollcall.discovery.dns.scheme", (input[0] & 0x80) != 0 ? "grpcs" : "grpc",
                "rollcall.discovery.dns.server", "127.0.0.1:53"));
        if (!type.equals("SRV")) {
            keys.put("rollcall.discovery.dns.port", "7001"); // an SRV record names its own
        }
        DnsSettings settings = DnsSettings.read(Settings.of(keys).scope("rollcall.discovery.dns."));
        byte[] wire = Arrays.copyOfRange(input, 1, input.length);
        DnsLookup.Answer answer;
        try {
            answer = new DnsLookup(settings, new Answering(wire)).lookup();
        } catch (DnsLookup.LookupFailedException e) {
            assertClean(e.getMessage());
            return;
        }
        assertThat(answer.ttlSeconds()).isNotNegative();
        answer.skipped().forEach(DnsAnswerFuzzTest::assertClean);
        for (WorkerEndpoint e : answer.endpoints()) {
            assertThat(WorkerEndpoint.parse(e.url())).isEqualTo(e.withLabels(Map.of()));
        }
    }

    private static void assertClean(String line) {
        assertThat(PeerText.isClean(line)).as("escaped: %s", PeerText.escape(line)).isTrue();
        assertThat(line.length()).as("bounded").isLessThanOrEqualTo(MAX_MESSAGE_CHARS);
    }

    /** Answers every question with the same bytes, as dnsjava reads them off the wire. */
    private static final class Answering implements Resolver {
        private final byte[] wire;

        Answering(byte[] wire) {
            this.wire = wire;
        }

        @Override
        public CompletionStage<Message> sendAsync(Message query) {
            try {
                return CompletableFuture.completedFuture(new Message(wire));
            } catch (IOException e) {
                return CompletableFuture.failedFuture(e);
            }
        }

        @Override
        public void setPort(int port) {
        }

        @Override
        public void setTCP(boolean flag) {
        }

        @Override
        public void setIgnoreTruncation(boolean flag) {
        }

        @Override
        public void setEDNS(int version, int payloadSize, int flags, List<EDNSOption> options) {
        }

        @Override
        public void setTSIGKey(TSIG key) {
        }

        @Override
        public void setTimeout(Duration timeout) {
        }
    }
}
