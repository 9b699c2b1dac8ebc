package dev.rollcall.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.PeerText;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.Status;
import java.net.ConnectException;
import java.time.Duration;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/**
 * A failed probe's reason is the peer's words in part (a worker's status message, a TLS peer's
 * certificate names): it reaches statuses, logs, exceptions and terminals escaped and bounded.
 */
class ProbeFailureTextTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final String FORGED = "busy\n[main] INFO FORGED line \u001b[2J";

    @Test
    void aWorkersStatusMessageCannotForgeALogLine() {
        ProbeOutcome.Failed failed = ProbeFailures.failed(Status.UNAVAILABLE.withDescription(FORGED).asRuntimeException(),
                TIMEOUT);

        assertThat(failed.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(failed.reason()).isEqualTo("UNAVAILABLE: busy\\n[main] INFO FORGED line \\u001b[2J");
    }

    @Test
    void aHugeStatusMessageIsBounded() {
        String reason = ProbeFailures.describe(Status.INTERNAL.withDescription("x".repeat(60_000)).asRuntimeException(),
                TIMEOUT);

        assertThat(reason).startsWith("INTERNAL: xxx").endsWith("more)").hasSizeLessThan(ProbeFailures.MAX_REASON_CHARS + 20);
    }

    /** The text of a failed handshake may name the peer's certificate: the peer chose it. */
    @Test
    void aTlsFailureIsEscapedToo() {
        Throwable handshake = Status.UNAVAILABLE.withCause(new SSLHandshakeException(
                "No subject alternative DNS name matching evil\u001b[2Jhost found")).asRuntimeException();

        String reason = ProbeFailures.describe(handshake, TIMEOUT);
        assertThat(reason).startsWith("UNAVAILABLE: TLS handshake failed: ");
        assertThat(PeerText.isClean(reason)).as(reason).isTrue();
    }

    @Test
    void ordinaryReasonsAreUnchanged() {
        assertThat(ProbeFailures.describe(Status.DEADLINE_EXCEEDED.asRuntimeException(), TIMEOUT))
                .isEqualTo("DEADLINE_EXCEEDED: no answer within 2000 ms");
        assertThat(ProbeFailures.describe(Status.UNAVAILABLE.withDescription("io exception")
                .withCause(new ConnectException("Connection refused: /10.0.0.7:7001")).asRuntimeException(),
                TIMEOUT)).isEqualTo("UNAVAILABLE: io exception: Connection refused: /10.0.0.7:7001");
    }
}
