package dev.rollcall.worker;

import dev.rollcall.api.ServingState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's drain and the wait of its graceful close: {@link #drain()} says
 * {@link ServingState#DRAINING} to every coordinator, {@link #awaitDone()} waits until the work in
 * flight is done and neither a call started nor the drain was announced for {@code drain-quiet}, at
 * most {@code shutdown-grace}. Thread-safe.
 */
final class WorkerDrain {

    private static final Logger log = LoggerFactory.getLogger(WorkerDrain.class);

    private final WorkerInfoService info;
    private final CallsInFlight calls;
    private final String worker;
    private final long shutdownGraceMillis;
    private final long drainQuietMillis;

    WorkerDrain(WorkerInfoService info, CallsInFlight calls, String worker, long shutdownGraceMillis,
                long drainQuietMillis) {
        this.info = info;
        this.calls = calls;
        this.worker = worker;
        this.shutdownGraceMillis = shutdownGraceMillis;
        this.drainQuietMillis = drainQuietMillis;
    }

    /** Says DRAINING (again: idempotent); returns whether this call started the drain. */
    synchronized boolean drain() {
        if (info.state() == ServingState.DRAINING) {
            return false;
        }
        // The quiet period starts at the drain when coordinators watch this worker: one of them may
        // have planned on it just before it heard the news, and be connecting still. With nobody
        // watching there is nobody to wait for (a fleet of test workers closes at once).
        if (info.watchers() > 0) {
            calls.drained();
        }
        info.state(ServingState.DRAINING);
        return true;
    }

    /** Leaves the drain: the worker takes new work again. */
    synchronized void resume() {
        info.state(ServingState.SERVING);
    }

    /**
     * Waits, after {@link #drain()}, until the worker may stop: see the class. Logs when the grace
     * ran out. Keeps the thread's interrupt.
     */
    void awaitDone() {
        try {
            if (!calls.awaitQuiet(Math.min(drainQuietMillis, shutdownGraceMillis), shutdownGraceMillis)) {
                log.warn("worker {}: {} calls still running after the {} ms grace; cancelling them", worker,
                        calls.count(), shutdownGraceMillis);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
