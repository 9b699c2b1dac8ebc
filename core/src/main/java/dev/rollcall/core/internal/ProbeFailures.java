package dev.rollcall.core.internal;

import dev.rollcall.api.PeerText;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import javax.net.ssl.SSLException;

/**
 * Why a probe failed, in words a user can act on: stable across retries of the same failure,
 * escaped and bounded (a worker's status message and a TLS peer's names are the peer's words).
 * Internal: shared by core's probes and {@code rollcall-grpc}'s connection check. Thread-safe.
 */
public final class ProbeFailures {

    private ProbeFailures() {
    }

    /** {@code failure} as an outcome: its gRPC code and {@link #describe}'s reason. */
    public static ProbeOutcome.Failed failed(Throwable failure, Duration timeout) {
        return new ProbeOutcome.Failed(Status.fromThrowable(failure).getCode(), describe(failure, timeout));
    }

    /** The longest reason {@link #describe} gives, of the failure's own text (a worker's status message is a peer's). */
    static final int MAX_REASON_CHARS = 512;

    /**
     * A short, human reason for a failed probe, stable across retries of the same failure:
     * {@code UNAVAILABLE: io exception: Connection refused: /10.0.0.7:7001}. Escaped and bounded
     * ({@link PeerText}, {@value #MAX_REASON_CHARS} characters): a worker's status message, a TLS
     * peer's certificate names and an exception's text are the peer's words, and the reason goes
     * into logs, statuses, exceptions and terminals as it is.
     */
    public static String describe(Throwable failure, Duration timeout) {
        return PeerText.escape(reason(failure, timeout), MAX_REASON_CHARS);
    }

    private static String reason(Throwable failure, Duration timeout) {
        Throwable t = failure;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        Status status = Status.fromThrowable(t);
        if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
            // The message limit (rollcall.probe.max-response-bytes) or the 64 KiB metadata limit.
            return "RESOURCE_EXHAUSTED: answer too large (limit rollcall.probe.max-response-bytes): "
                    + status.getDescription();
        }
        if (status.getCode() == Status.Code.DEADLINE_EXCEEDED) {
            // gRPC's own text carries timings that differ on every retry; a stable reason keeps
            // repeated failures from looking like changes.
            return "DEADLINE_EXCEEDED: no answer within " + timeout.toMillis() + " ms";
        }
        if (status.getCode() == Status.Code.UNKNOWN && status.getDescription() == null) {
            return String.valueOf(t);
        }
        String tls = tlsFailure(status.getCause());
        if (tls != null) {
            return status.getCode() + ": TLS handshake failed: " + tls;
        }
        String description = status.getDescription();
        Throwable cause = status.getCause();
        if (cause != null && cause.getMessage() != null) {
            // gRPC says "io exception"; the cause says what happened ("Connection refused: /10.0.0.7:7001").
            description = description == null ? cause.getMessage() : description + ": " + cause.getMessage();
        }
        if (status.getCode() == Status.Code.UNIMPLEMENTED) {
            description = "the server does not serve rollcall.v1.WorkerService (not a Rollcall worker?)";
        }
        return status.getCode() + (description == null ? "" : ": " + description);
    }

    /**
     * What went wrong in a TLS handshake, from the innermost cause of the first {@link SSLException}
     * in {@code cause}'s chain ("PKIX path building failed: ...", "No subject alternative names
     * matching IP address 10.0.0.7 found", "Received fatal alert: certificate_required"); null when
     * the failure is not TLS. gRPC's own text ("io exception", the channel pipeline) says nothing.
     */
    private static String tlsFailure(Throwable cause) {
        Throwable ssl = null;
        for (Throwable t = cause; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof SSLException) {
                ssl = t;
                break;
            }
        }
        if (ssl == null) {
            return null;
        }
        String best = null;
        for (Throwable t = ssl; t != null && t.getCause() != t; t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()
                    && !t.getMessage().startsWith("General OpenSslEngine problem")) {
                best = t.getMessage();
            }
        }
        return (best == null ? ssl.getClass().getSimpleName() : best).replaceAll("\\s+", " ").strip();
    }
}
