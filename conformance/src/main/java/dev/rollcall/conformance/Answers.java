package dev.rollcall.conformance;

import dev.rollcall.api.PeerText;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import io.grpc.Status;
import java.time.Duration;

/** How a run compares answers and shows what a worker said: every piece of a peer's text escaped and bounded. */
final class Answers {

    private Answers() {
    }

    /** Equal except for {@code heartbeat_millis}, which only streams set (W5). */
    static boolean same(WorkerInfoResponse a, WorkerInfoResponse b) {
        return a.toBuilder().clearHeartbeatMillis().build().equals(b.toBuilder().clearHeartbeatMillis().build());
    }

    /** {@code instance 'i', version 'v', state SERVING, revision 3, 2 labels, 1 service[, 2 capabilities]}. */
    static String describe(WorkerInfoResponse r) {
        if (r == null) {
            return "(nothing)";
        }
        return "instance " + quoted(r.getInstanceId()) + ", version " + quoted(r.getVersion()) + ", state "
                + state(r) + ", revision " + Long.toUnsignedString(r.getRevision()) + ", " + r.getLabelsCount()
                + (r.getLabelsCount() == 1 ? " label, " : " labels, ") + r.getServicesCount()
                + (r.getServicesCount() == 1 ? " service" : " services")
                + (r.getCapabilitiesCount() == 0 ? "" : ", " + r.getCapabilitiesCount()
                        + (r.getCapabilitiesCount() == 1 ? " capability" : " capabilities"));
    }

    static String state(WorkerInfoResponse r) {
        return switch (r.getStateValue()) {
            case 0 -> "SERVING";
            case 1 -> "NOT_SERVING";
            case 2 -> "DRAINING";
            default -> "unknown number " + r.getStateValue();
        };
    }

    /** A peer's string in quotes, escaped, at most 60 characters. */
    static String quoted(String s) {
        return "'" + PeerText.escape(s, 60) + "'";
    }

    /** {@code UNAVAILABLE: io exception: Connection refused: ...}, the description and the cause escaped and bounded. */
    static String status(Status s) {
        String d = s.getDescription();
        String cause = s.getCause() == null ? null : s.getCause().getMessage(); // "Connection refused: ..."
        return s.getCode() + (d == null || d.isEmpty() ? "" : ": " + PeerText.escape(d, 160))
                + (cause == null || cause.isEmpty() ? "" : ": " + PeerText.escape(cause, 160));
    }

    /** Whether gRPC refused an answer for being over the client's inbound limit. */
    static boolean tooLarge(Status s) {
        return s.getCode() == Status.Code.RESOURCE_EXHAUSTED && s.getDescription() != null
                && s.getDescription().contains("exceeds maximum");
    }

    static String ms(long nanos) {
        return Duration.ofNanos(nanos).toMillis() + " ms";
    }

    /** Seconds with one decimal: {@code 2.5 s}. */
    static String seconds(long nanos) {
        return String.format("%.1f s", nanos / 1e9);
    }
}
