package dev.rollcall.core.internal.fleet;

import dev.rollcall.core.internal.probe.ProbeScheduler;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.snapshot.PublishPacer;
import dev.rollcall.protocol.ProbeOutcome;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the user's failed calls do to their workers (passive ejection): a call that failed
 * {@code UNAVAILABLE} takes its worker out of use until a probe answers, one that ran out of its
 * deadline has it probed at once. Rate-limited per worker, and ejection capped at a share of the
 * workers in use, so that the caller's own network trouble cannot empty the fleet.
 *
 * <p>Confined to the resolver's serial context.
 */
final class FailedCalls {

    private static final Logger log = LoggerFactory.getLogger(FailedCalls.class);

    /** A worker is ejected at most once per this long, however many of its calls fail. */
    static final long EJECT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** At most this share of the workers in use is out after failed calls at once (at least one worker). */
    static final int EJECT_MAX_PERCENT = 10;

    private final SerialContext context;
    private final ProbeScheduler<TrackedWorker> probes;
    private final PublishPacer pacer;
    /** How many tracked workers are in use now. */
    private final LongSupplier inUse;
    private final Predicate<TrackedWorker> tracks;
    /** Workers out of use since a user's call to them failed, until their next probe finishes. */
    private final Set<TrackedWorker> ejected = new HashSet<>();

    FailedCalls(SerialContext context, ProbeScheduler<TrackedWorker> probes, PublishPacer pacer, LongSupplier inUse,
                Predicate<TrackedWorker> tracks) {
        this.context = context;
        this.probes = probes;
        this.pacer = pacer;
        this.inUse = inUse;
        this.tracks = tracks;
    }

    /**
     * A user's call to {@code t} (in use) failed as if it were gone ({@code why}, escaped): out of use
     * at once and probed again now, back in when it answers. Rate-limited: once per worker per
     * {@link #EJECT_INTERVAL_NANOS}, and never more than {@link #EJECT_MAX_PERCENT} of the workers
     * in use out at once. Returns whether it was taken out (the caller settles).
     */
    boolean failed(TrackedWorker t, String why) {
        long now = context.nanoTime();
        if (t.ejectedAt() != Long.MIN_VALUE && now - t.ejectedAt() < EJECT_INTERVAL_NANOS) {
            log.debug("worker {}: a call failed ({}), ejected {} ms ago already", t.url(), why,
                    (now - t.ejectedAt()) / 1_000_000);
            return false;
        }
        long limit = Math.max(1, (inUse.getAsLong() + ejected.size()) * EJECT_MAX_PERCENT / 100);
        if (ejected.size() >= limit) {
            log.warn("worker {}: a call failed ({}), but {} of the fleet are out after failed calls already"
                    + " (limit {}%); keeping it", t.url(), why, ejected.size(), EJECT_MAX_PERCENT);
            return false;
        }
        ejected.add(t);
        t.ejected(why, now);
        pacer.changedUrgently();
        probes.request(t);
        return true;
    }

    /**
     * A user's call to {@code t} (in use) ran out of its deadline. That alone is no evidence against
     * the worker (a slow query's deadline is the query's business), so the worker is only suspected:
     * kept in use, and probed at once with a probe that starts now (the probe deadline,
     * {@code probe.timeout}). If that probe answers, the worker showed a sign of life and nothing
     * changes (no snapshot); if it fails too, the worker is out as after any failed probe, with its
     * reason, and back when a retry answers. Rate-limited like ejection: one suspicion per worker per
     * {@link #EJECT_INTERVAL_NANOS}. No cap is needed: what takes a worker out is the resolver's own
     * probe, never the caller's word. Returns whether a probe was asked for (the caller settles).
     */
    boolean timedOut(TrackedWorker t, String why) {
        long now = context.nanoTime();
        if (t.suspectedAt() != Long.MIN_VALUE && now - t.suspectedAt() < EJECT_INTERVAL_NANOS) {
            log.debug("worker {}: a call timed out ({}), probed for it {} ms ago already", t.url(), why,
                    (now - t.suspectedAt()) / 1_000_000);
            return false;
        }
        t.suspected(now);
        log.debug("worker {}: a call timed out ({}); probing it at once", t.url(), why);
        probes.requestFresh(t, outcome -> {
            if (!outcome.answered() && tracks.test(t)) {
                log.info("worker {}: a call to it timed out ({}) and the probe sent at once failed too: {}",
                        t.url(), why, ((ProbeOutcome.Failed) outcome).reason());
            }
        });
        return true;
    }

    /** A probe of {@code t} finished, or it left: it no longer counts as ejected. */
    void settled(TrackedWorker t) {
        ejected.remove(t);
    }
}
