package dev.rollcall.worker;

import dev.rollcall.api.ServingState;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's drain and the wait of its graceful close. {@link #drain()} says
 * {@link ServingState#DRAINING} to every coordinator; {@link #awaitDone()} then waits, at most
 * {@code shutdown-grace}, until the calls in flight are done and
 * <ul>
 * <li>every coordinator that holds the worker ({@code holder_id}, exact drain) has released it or
 *     its stream has ended, and</li>
 * <li>when a coordinator without a holder id watched it at the drain (an older one, or one not
 *     under leases), neither a call started nor the drain was announced for {@code drain-quiet}:
 *     it may have planned on the worker just before it heard;</li>
 * <li>when nobody watched it at the drain, no call started for {@code drain-quiet} (a query may
 *     have planned on it from a snapshot without a watch).</li>
 * </ul>
 * When only holders watched it, there is no quiet period: the worker stops as soon as the last one
 * lets go. Thread-safe.
 */
final class WorkerDrain {

    private static final Logger log = LoggerFactory.getLogger(WorkerDrain.class);

    private final WorkerInfoService info;
    private final CallsInFlight calls;
    private final String worker;
    private final long shutdownGraceMillis;
    private final long drainQuietMillis;
    private boolean exact; // guarded by this: only holders watched at the drain
    private boolean plainAtDrain; // guarded by this: a watcher without a holder id watched at the drain
    private long drainedNanos; // guarded by this

    WorkerDrain(WorkerInfoService info, CallsInFlight calls, String worker, long shutdownGraceMillis,
                long drainQuietMillis) {
        this.info = info;
        this.calls = calls;
        this.worker = worker;
        this.shutdownGraceMillis = shutdownGraceMillis;
        this.drainQuietMillis = drainQuietMillis;
    }

    /** Says DRAINING (again: idempotent), logging it when {@code logged} (not when a close drains). */
    synchronized void drain(boolean logged) {
        if (info.state() == ServingState.DRAINING) {
            return;
        }
        int holderStreams = info.holderStreams();
        int plain = Math.max(0, info.watchers() - holderStreams);
        exact = plain == 0 && holderStreams > 0;
        plainAtDrain = plain > 0;
        if (plain > 0) {
            calls.drained();
        }
        drainedNanos = System.nanoTime();
        info.state(ServingState.DRAINING);
        if (logged) {
            log.info("worker {} draining: takes no new work{}", worker, exact ? " (exact: every watcher holds it)" : "");
        }
    }

    /** Leaves the drain (or NOT_SERVING): the worker takes new work again; logs {@code what} happened. */
    synchronized void resume(String what) {
        exact = false;
        plainAtDrain = false;
        info.state(ServingState.SERVING);
        log.info("worker {} {}", worker, what);
    }

    /**
     * Waits, after {@link #drain()}, until the worker may stop (see the class), and logs whom it
     * waited for and how long. Keeps the thread's interrupt.
     *
     * @return whether the drain was exact and ended as one: every holder let go, no call in
     *         flight, within the grace (the server then stops with a short grace of its own)
     */
    boolean awaitDone() {
        boolean exactNow;
        boolean plain;
        long since;
        synchronized (this) {
            exactNow = exact;
            plain = plainAtDrain;
            since = drainedNanos;
        }
        long quiet = exactNow ? 0 : Math.min(drainQuietMillis, shutdownGraceMillis);
        long start = System.nanoTime();
        boolean done;
        try {
            done = calls.awaitQuiet(quiet, shutdownGraceMillis, () -> info.holding() == 0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        String ends = info.holdEnds();
        if (!done) {
            List<String> holding = info.stillHolding();
            log.warn("worker {}: after the {} ms grace, {} calls still run and {} coordinators still hold it{}; "
                            + "stopping anyway{}", worker, shutdownGraceMillis, calls.count(), holding.size(),
                    holding.isEmpty() ? "" : " (" + String.join("; ", holding) + ")",
                    ends.isEmpty() ? "" : ". Let go: " + ends);
        } else if (!ends.isEmpty()) {
            log.info("worker {}: every coordinator let go {} ms after the drain ({} ms in close); {}{}", worker,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since), waited, ends,
                    exactNow ? "" : plain ? "; and drain-quiet passed for the watchers without a holder id"
                            : "; and drain-quiet passed since the last call started");
        }
        return done && exactNow;
    }
}
