package dev.rollcall.worker;

import dev.rollcall.protocol.v1.WorkerInfoResponse;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One distinct answer of a worker, stamped with its revision: the unary form (no heartbeat) and,
 * made once per granted heartbeat, the form a watch stream sends. Immutable and thread-safe.
 *
 * <p>Revisions come from one counter per process, so they grow across every
 * {@link WorkerInfoService} of the process: even two services that were given the same instance id
 * never repeat one.
 */
final class Answer {

    private static final AtomicLong REVISIONS = new AtomicLong();
    /** Granted heartbeats are a handful of values in practice; past this many, forms are not kept. */
    private static final int MAX_KEPT_FORMS = 16;

    private final WorkerInfoResponse unary;
    private final ConcurrentHashMap<Integer, WorkerInfoResponse> streamed = new ConcurrentHashMap<>();

    private Answer(WorkerInfoResponse unary) {
        this.unary = unary;
    }

    /** {@code response} with the next revision of the process. Call it where the answer is chosen. */
    static Answer stamp(WorkerInfoResponse response) {
        return new Answer(response.toBuilder().setRevision(REVISIONS.incrementAndGet()).setHeartbeatMillis(0).build());
    }

    long revision() {
        return unary.getRevision();
    }

    /** What {@code WorkerInfo} answers. */
    WorkerInfoResponse unary() {
        return unary;
    }

    /** What a watch stream that was granted {@code heartbeatMillis} (0: none) sends. */
    WorkerInfoResponse forStream(int heartbeatMillis) {
        if (heartbeatMillis == 0) {
            return unary;
        }
        WorkerInfoResponse kept = streamed.get(heartbeatMillis);
        if (kept != null) {
            return kept;
        }
        WorkerInfoResponse made = unary.toBuilder().setHeartbeatMillis(heartbeatMillis).build();
        if (streamed.size() < MAX_KEPT_FORMS) {
            streamed.putIfAbsent(heartbeatMillis, made);
        }
        return made;
    }

    /** The newer of two answers (by revision); either may be null. */
    static Answer newer(Answer a, Answer b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return b.revision() > a.revision() ? b : a;
    }
}
