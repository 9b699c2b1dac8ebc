package dev.rollcall.worker;

import dev.rollcall.api.Scheduler;
import dev.rollcall.api.Ticker;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watch streams of one {@link WorkerInfoService} and what is sent on them off the callers'
 * threads: a change is handed to {@code executor} once (a burst of changes is one pass, carrying
 * the newest answer), and heartbeats come from one timer for all streams, a sweep that visits
 * every stream and is set again for the earliest one due. Thread-safe.
 *
 * <p>Sweeps run on the ticks of a shared grid: instants at which the wall clock reads a multiple of
 * {@link #GRID_NANOS}. Every worker on a host (and, with clocks in sync, every worker of a fleet)
 * sends its heartbeats on the same ticks, so that a coordinator reads them in bursts, one event-loop
 * wake-up for many, instead of one wake-up for each (with many kept streams the wake-ups are most
 * of what an idle fleet costs both sides). A heartbeat waits at most one tick for it; the wall clock
 * only places the ticks (a step of it moves them, and delays no heartbeat by more than a tick).
 */
final class WatchStreams {

    private static final Logger log = LoggerFactory.getLogger(WatchStreams.class);

    /**
     * The spacing of the sweeps' ticks: half of {@link WatchStream#SLACK_NANOS}, so that a heartbeat
     * that waits for its tick still leaves half the slack for the timer's own lateness.
     */
    static final long GRID_NANOS = WatchStream.SLACK_NANOS / 2;

    private final Set<WatchStream> streams = ConcurrentHashMap.newKeySet();
    private final Supplier<Answer> current;
    private final Executor executor;
    private final Scheduler scheduler;
    private final Ticker ticker;
    /** Nanoseconds on the clock whose multiples of {@link #GRID_NANOS} are the sweeps' ticks. */
    private final Ticker wallClock;
    private final AtomicBoolean pushQueued = new AtomicBoolean();
    private final Object sweepLock = new Object();
    // Guarded by sweepLock: the one sweep set (null: none), when it runs, and which one it is.
    private Future<?> sweep;
    private long sweepAt;
    private long sweepToken;

    WatchStreams(Supplier<Answer> current, Executor executor, Scheduler scheduler, Ticker ticker, Ticker wallClock) {
        this.current = current;
        this.executor = executor;
        this.scheduler = scheduler;
        this.ticker = ticker;
        this.wallClock = wallClock;
    }

    Ticker ticker() {
        return ticker;
    }

    /** Starts sending to {@code stream}: the current answer now, then every change, and heartbeats. */
    void add(WatchStream stream) {
        streams.add(stream);
        stream.offer(current.get());
        if (stream.heartbeatMillis() > 0) {
            sweepBy(stream.heartbeat(ticker.read()));
        }
    }

    void remove(WatchStream stream) {
        streams.remove(stream);
        stream.cancelled();
        cancelSweepIfIdle();
    }

    int size() {
        return streams.size();
    }

    /** The answer changed: every stream gets the newest one, sent from {@code executor}. */
    void push() {
        if (pushQueued.compareAndSet(false, true)) {
            executor.execute(() -> guarded("a push", this::sendNewest));
        }
    }

    private void sendNewest() {
        pushQueued.set(false); // a change from now on queues another pass, which sends it
        Answer newest = current.get();
        for (WatchStream s : streams) {
            s.offer(newest);
        }
    }

    /** Ends every stream after the current answer (on the caller's thread: a close waits for it). */
    void endAll() {
        Answer last = current.get();
        for (WatchStream s : streams) {
            streams.remove(s);
            s.complete(last);
        }
        cancelSweepIfIdle();
    }

    /**
     * With no stream left, no sweep waits either: a closed worker leaves nothing queued on the
     * shared push thread, which can then end (a sweep set for a 60 s heartbeat used to keep it up that long).
     */
    private void cancelSweepIfIdle() {
        synchronized (sweepLock) {
            if (sweep != null && streams.isEmpty()) {
                sweep.cancel(false);
                sweep = null;
                sweepToken++;
            }
        }
    }

    /**
     * Sets the sweep to run at the first tick at or after {@code at} (a {@link Ticker} reading); an
     * earlier one set stays.
     */
    private void sweepBy(long at) {
        if (at == Long.MAX_VALUE) {
            return;
        }
        long now = ticker.read();
        at = onTick(Math.max(at, now), wallClock.read() - now);
        synchronized (sweepLock) {
            if (sweep != null && sweepAt <= at) {
                return;
            }
            if (sweep != null) {
                sweep.cancel(false);
            }
            long token = ++sweepToken;
            sweepAt = at;
            sweep = scheduler.schedule(executor, () -> guarded("a heartbeat sweep", () -> sweep(token)),
                    Math.max(0, at - ticker.read()),
                    TimeUnit.NANOSECONDS);
        }
    }

    /**
     * The first tick at or after {@code at}, a {@link Ticker} reading; {@code wallMinusTicker} is
     * what the wall clock reads more than the ticker at the same instant.
     */
    static long onTick(long at, long wallMinusTicker) {
        long wall = at + wallMinusTicker;
        long past = Math.floorMod(wall, GRID_NANOS);
        return past == 0 ? at : at + (GRID_NANOS - past);
    }

    private void sweep(long token) {
        synchronized (sweepLock) {
            if (token != sweepToken) {
                return; // replaced by an earlier one, which ran or runs
            }
            sweep = null;
        }
        long now = ticker.read();
        long next = Long.MAX_VALUE;
        for (WatchStream s : streams) {
            next = Math.min(next, s.heartbeat(now));
        }
        if (next != Long.MAX_VALUE) {
            // Streams due within a slack of each other share a sweep: never more than one per slack.
            sweepBy(Math.max(next, now + WatchStream.SLACK_NANOS));
        }
    }

    /** Runs {@code task}; a bug in it is logged, not lost in an executor's future. */
    private static void guarded(String what, Runnable task) {
        try {
            task.run();
        } catch (RuntimeException | Error e) {
            log.error("{} to watching coordinators failed", what, e);
            if (e instanceof Error error) {
                throw error;
            }
        }
    }

    /** Whether a heartbeat sweep is set (for tests: one timer, however many streams). */
    boolean sweepSet() {
        synchronized (sweepLock) {
            return sweep != null;
        }
    }
}
