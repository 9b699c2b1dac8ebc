package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetEvent;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.snapshot.ShownWorker;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Flap damping of workers, as routers damp a flapping route (BGP route-flap damping, RFC 2439):
 * each change of a worker that a snapshot would show (it comes into use or goes out of it, or
 * answers another version, other labels or other capabilities than it last did) adds {@value #PENALTY_PER_CHANGE} to its
 * penalty, which halves every {@link #HALF_LIFE}. At {@value #SUPPRESS_AT} the worker is damped:
 * held out of new snapshots (fail closed: {@code REJECTED}, the reason saying it is damped for
 * flapping and until when), however it answers meanwhile, so that its answers cost no listener a
 * snapshot. It returns once the penalty has decayed below {@value #REUSE_BELOW}; the penalty is
 * capped so that this is never more than {@link #MAX_HOLD} after its last change.
 *
 * <p>One honest event (a drain and resume, a restart in place, an upgrade) is two changes (out,
 * in); three such within about 15 s are damped (a crash loop), and a worker going out and back
 * every 7 s or more often is held out for as long as it does. A worker held out costs no snapshot
 * while its hold lasts, one for each extension of it. It is told once when damped and once when it
 * returns ({@link FleetEvent.WorkerDamped}, {@link FleetEvent.WorkerUndamped}, read from the
 * snapshots), with one WARN and one INFO line.
 *
 * <p>Confined to the resolver's serial context. A worker's penalty is a {@link Penalty}, kept on
 * it and written here alone.
 */
final class FlapDamping {

    private static final Logger log = LoggerFactory.getLogger(FlapDamping.class);

    static final double PENALTY_PER_CHANGE = 1;
    static final double SUPPRESS_AT = 6;
    static final double REUSE_BELOW = 3;
    /**
     * Short beside a route's (15 min in routers' defaults): a worker held out is capacity lost,
     * and the flood a flapper causes is bounded already by the pacing and by the hold itself.
     */
    static final Duration HALF_LIFE = Duration.ofSeconds(15);
    static final Duration MAX_HOLD = Duration.ofSeconds(30);
    /** RFC 2439's ceiling: from it, the penalty decays below the reuse threshold in {@link #MAX_HOLD}. */
    static final double CEILING = REUSE_BELOW * Math.pow(2, (double) MAX_HOLD.toNanos() / HALF_LIFE.toNanos());

    private final SerialContext context;
    private final Clock clock;
    /** Asked whether a worker is still tracked when its hold is due. */
    private final Predicate<TrackedWorker> tracks;
    /** Told when a hold ends or is extended: what a snapshot shows of the worker changed. */
    private final Runnable changed;
    private boolean off;

    FlapDamping(SerialContext context, Clock clock, Predicate<TrackedWorker> tracks,
                Runnable changed) {
        this.context = context;
        this.clock = clock;
        this.tracks = tracks;
        this.changed = changed;
    }

    /** One worker's penalty and hold, written by {@link FlapDamping} alone. */
    static final class Penalty {
        /** Whether it ever answered: its first answer is no change. */
        private boolean seen;
        private boolean seenInUse;
        private String seenVersion;
        private Map<String, String> seenLabels;
        /** As labels: a capability that comes and goes moves the worker in and out of queries that require it. */
        private Capabilities seenCapabilities;
        /** Its last answer, shown while it is held out. */
        private WorkerInfo lastAnswer;
        private double penalty;
        private long updatedAt;
        /** What snapshots show of it while it is held out; null while it is not. */
        private ShownWorker.Held held;
        private SerialContext.Timer due;

        /** What snapshots show while it is held out, or null while it is not. */
        ShownWorker.Held held() {
            return held;
        }
    }

    /**
     * {@code t} may have changed what a snapshot shows of it: adds to its penalty if it did, and
     * damps it at the threshold. Returns whether it was damped now (news that takes it away).
     */
    boolean observe(TrackedWorker t) {
        if (off) {
            return false;
        }
        Penalty p = t.flapPenalty();
        WorkerInfo info = t.info();
        boolean answered = t.answered() && info != null;
        boolean inUse = answered && t.inUse();
        if (answered) {
            p.lastAnswer = info;
        }
        if (!p.seen) {
            if (answered) {
                p.seen = true; // its first answer is no change
                see(p, inUse, info);
            }
            return false;
        }
        // What it answers is compared only while it answers: a dropped connection and the failed
        // probes of a restart change nothing more than the going out of use before them did.
        if (inUse == p.seenInUse && (!answered || info.version().equals(p.seenVersion)
                && info.labels().equals(p.seenLabels) && info.capabilities().equals(p.seenCapabilities))) {
            return false;
        }
        if (answered) {
            see(p, inUse, info);
        } else {
            p.seenInUse = false;
        }
        long now = context.nanoTime();
        p.penalty = Math.min(CEILING, decayed(p, now) + PENALTY_PER_CHANGE);
        p.updatedAt = now;
        if (p.held != null || p.penalty < SUPPRESS_AT || p.lastAnswer == null) {
            return false;
        }
        hold(t, p, now, p.lastAnswer);
        log.warn("worker {} is held out of new snapshots: {}", t.url(), p.held.reason());
        return true;
    }

    private static void see(Penalty p, boolean inUse, WorkerInfo info) {
        p.seenInUse = inUse;
        p.seenVersion = info.version();
        p.seenLabels = info.labels();
        p.seenCapabilities = info.capabilities();
    }

    /** Holds {@code t} out until its penalty will have decayed below the reuse threshold, showing {@code info}. */
    private void hold(TrackedWorker t, Penalty p, long now, WorkerInfo info) {
        double penalty = decayed(p, now);
        long holdNanos = holdNanos(penalty);
        p.held = new ShownWorker.Held(Objects.requireNonNull(info, "info"), FleetEvent.WorkerDamped.REASON_START
                + ": its verdict or version changed too often (penalty " + shown(penalty) + ", damped from "
                + shown(SUPPRESS_AT) + ", half-life " + HALF_LIFE.toSeconds() + " s); held out until "
                + clock.instant().plusNanos(holdNanos));
        p.due = context.schedule(() -> due(t), Math.max(1, holdNanos));
        t.shownState().noteChange();
    }

    /** The hold of {@code t} is due: it returns if its penalty decayed enough, else the hold is extended. */
    private void due(TrackedWorker t) {
        Penalty p = t.flapPenalty();
        if (!tracks.test(t) || p.held == null) {
            return;
        }
        long now = context.nanoTime();
        double penalty = decayed(p, now);
        if (penalty < REUSE_BELOW + 1e-9) {
            p.held = null;
            p.due = null;
            t.shownState().noteChange();
            log.info("worker {} stopped flapping: back in new snapshots", t.url());
        } else {
            hold(t, p, now, p.held.info()); // it changed again meanwhile: a new "until", one snapshot
            log.debug("worker {} is still flapping: {}", t.url(), p.held.reason());
        }
        changed.run();
    }

    /** {@code t} is no longer tracked: its hold ends with it. */
    void forget(TrackedWorker t) {
        Penalty p = t.flapPenalty();
        if (p.due != null) {
            p.due.cancel();
            p.due = null;
        }
    }

    /** The penalty of {@code p} at {@code now}, decayed since it last grew. */
    private static double decayed(Penalty p, long now) {
        return p.penalty == 0 ? 0 : p.penalty * Math.pow(2, -(double) (now - p.updatedAt) / HALF_LIFE.toNanos());
    }

    /** How long a penalty takes to decay below the reuse threshold (at most {@link #MAX_HOLD}). */
    static long holdNanos(double penalty) {
        if (penalty <= REUSE_BELOW) {
            return 0;
        }
        double halfLives = Math.log(penalty / REUSE_BELOW) / Math.log(2);
        return Math.min(MAX_HOLD.toNanos(), (long) Math.ceil(halfLives * HALF_LIFE.toNanos()));
    }

    private static String shown(double penalty) {
        return String.format(Locale.ROOT, "%.1f", penalty);
    }

    /** For tests that compare trackers fed different histories of the same end: no worker is damped. */
    void off() {
        off = true;
    }
}
