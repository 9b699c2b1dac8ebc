package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.internal.probe.ProbeSlot;
import dev.rollcall.core.internal.probe.ProbeTarget;
import dev.rollcall.core.internal.snapshot.ShownState;
import dev.rollcall.core.internal.snapshot.ShownWorker;
import java.util.Locale;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One candidate endpoint and what is known about it: the per-worker state machine.
 *
 * <pre>
 *   NEW ──answer──► ANSWERED ──connection lost──► RECONNECTING ──answer──► ANSWERED
 *    │                 │  ▲                           │
 *    └──failure──► UNREACHABLE ◄──────failure─────────┘
 *                      └──answer──► ANSWERED
 * </pre>
 * The policy turns ANSWERED into COMPATIBLE or REJECTED when a snapshot is built; every other
 * state keeps the worker out (fail closed). Flap damping of probes lives here: a worker's failure
 * count, which sets its retry backoff, starts over only once it stayed up for a while; damping of
 * what snapshots show is {@link FlapDamping}'s, on the {@link FlapDamping.Penalty} it holds.
 *
 * <p>Confined to the resolver's serial context. The probe scheduling state ({@link #probeSlot()}) belongs
 * to the probe code ({@link ProbeSlot}), what the last snapshot showed of it to the snapshot code
 * ({@link ShownState}); the tracker's marks are behind accessors.
 */
final class TrackedWorker implements ProbeTarget, ShownWorker {

    private static final Logger log = LoggerFactory.getLogger(TrackedWorker.class);
    private static final long NOT_UP = Long.MIN_VALUE;

    /** Where a candidate is in its probe life. */
    enum State {
        NEW(WorkerStatus.State.PENDING),
        ANSWERED(WorkerStatus.State.COMPATIBLE),
        RECONNECTING(WorkerStatus.State.PENDING),
        UNREACHABLE(WorkerStatus.State.UNREACHABLE);

        /** What a snapshot shows before the policy has its say. */
        final WorkerStatus.State shown;

        State(WorkerStatus.State shown) {
            this.shown = shown;
        }
    }

    private final String url;
    private final ProbeSlot probe = new ProbeSlot();
    private WorkerEndpoint endpoint;
    /** Whether discovery labels it draining ({@link WorkerEndpoint#STATE_LABEL}); read on every build. */
    private boolean labelledDraining;
    private WorkerInfo info;           // the last answer; null until the first and after a failure
    private State state = State.NEW;
    private ServingState serving = ServingState.SERVING; // as the last answer said
    /** How many coordinators hold it, as its last answer said (only a DRAINING answer says it). */
    private OptionalInt holders = OptionalInt.empty();
    private String reason = "not probed yet";
    private int failures;              // failed probes since it last stayed up
    private long upSince = NOT_UP;     // ticker reading of the first answer since the last failure
    /** The instance whose highest revision {@link #revision} is; null until an answer carried one. */
    private String revisionOf;
    /** The highest revision taken from {@link #revisionOf} (unsigned; 0: none). */
    private long revision;
    /** How its connection was lost, until it answers again: said in the reasons of the failures that follow. */
    private String lostBecause;
    /** What the last snapshot showed of it: the snapshot code's, behind its own accessors. */
    private final ShownState shown = new ShownState(this);
    /** Which candidate set from discovery last listed it (the tracker's count). */
    private long seenInSet;
    /** When a failed call last took it out of use ({@code Long.MIN_VALUE}: never); the tracker's rate limit. */
    private long ejectedAt = Long.MIN_VALUE;
    /** When a call that timed out last had it probed at once ({@code Long.MIN_VALUE}: never); the tracker's rate limit. */
    private long suspectedAt = Long.MIN_VALUE;
    /** Its flap penalty and hold: {@link FlapDamping}'s. */
    private final FlapDamping.Penalty flaps = new FlapDamping.Penalty();

    TrackedWorker(WorkerEndpoint endpoint) {
        this.url = endpoint.url();
        this.endpoint = endpoint;
        this.labelledDraining = labelledDraining(endpoint);
    }

    /** Notes that what a snapshot shows of it may have changed, so that the next build reads it. */
    private void noteChange() {
        shown.noteChange();
    }

    @Override
    public String url() {
        return url;
    }

    @Override
    public ProbeSlot probeSlot() {
        return probe;
    }

    @Override
    public ShownState shownState() {
        return shown;
    }

    /** Its flap penalty and hold, written by {@link FlapDamping} alone. */
    FlapDamping.Penalty flapPenalty() {
        return flaps;
    }

    @Override
    public Held heldOut() {
        return flaps.held();
    }

    /** Which candidate set from discovery last listed it. */
    long seenInSet() {
        return seenInSet;
    }

    /** Discovery's set number {@code set} lists it. */
    void seenIn(long set) {
        seenInSet = set;
    }

    /** When a failed call last took it out ({@code Long.MIN_VALUE}: never). */
    long ejectedAt() {
        return ejectedAt;
    }

    /** When a timed-out call last had it probed at once ({@code Long.MIN_VALUE}: never). */
    long suspectedAt() {
        return suspectedAt;
    }

    /** A timed-out call has it probed at {@code now}. */
    void suspected(long now) {
        suspectedAt = now;
    }

    private static boolean labelledDraining(WorkerEndpoint e) {
        return !e.labels().isEmpty() && WorkerEndpoint.STATE_DRAINING.equals(e.labels().get(WorkerEndpoint.STATE_LABEL));
    }

    @Override
    public WorkerEndpoint endpoint() {
        return endpoint;
    }

    @Override
    public WorkerInfo info() {
        return info;
    }

    State state() {
        return state;
    }

    @Override
    public String reason() {
        return reason;
    }

    /** Failed probes since it last stayed up: the retry number for the backoff. */
    @Override
    public int failures() {
        return failures;
    }

    /**
     * Whether it takes new work (meaningful once it answered): as it said, unless discovery labels it
     * draining ({@link WorkerEndpoint#STATE_LABEL}).
     */
    @Override
    public ServingState serving() {
        return labelledDraining ? ServingState.DRAINING : serving;
    }

    /**
     * How many coordinators still hold it, as its own last answer said: present only while that
     * answer says DRAINING and carried the count (not for a drain that only discovery's label says).
     */
    @Override
    public OptionalInt holders() {
        return holders;
    }

    /** What its own last answer said (discovery's label aside): whether the process itself drains. */
    ServingState said() {
        return serving;
    }

    /** Whether readers may be using it: it answered, serves, and nothing has cast doubt on it since. */
    @Override
    public boolean inUse() {
        return state == State.ANSWERED && serving() == ServingState.SERVING;
    }

    @Override
    public boolean answered() {
        return state == State.ANSWERED;
    }

    @Override
    public WorkerStatus.State shownBeforePolicy() {
        return state.shown;
    }

    /**
     * Discovery reports it with other labels; returns whether anything changed. A new
     * {@link WorkerEndpoint#INSTANCE_ID_LABEL} means another process at the address: out of use
     * until it answers (the caller probes it).
     */
    boolean relabel(WorkerEndpoint newer) {
        if (endpoint.labels().equals(newer.labels())) {
            return false;
        }
        noteChange();
        String was = endpoint.labels().get(WorkerEndpoint.INSTANCE_ID_LABEL);
        String now = newer.labels().get(WorkerEndpoint.INSTANCE_ID_LABEL);
        if (now != null && !now.equals(was) && state == State.ANSWERED) {
            log.info("worker {}: discovery reports a new instance {} (was {}); excluding it until it answers again",
                    url, PeerText.escape(now), PeerText.escape(was));
            state = State.RECONNECTING;
            reason = "discovery reports a new instance; probing again";
        }
        endpoint = newer;
        labelledDraining = labelledDraining(newer);
        if (info != null) {
            info = withEndpoint(info, newer);
        }
        return true;
    }

    /** As {@link #answered(WorkerInfo, ServingState, long, OptionalInt, long)} for an answer without a revision. */
    boolean answered(WorkerInfo answer, ServingState says, long now) {
        return answered(answer, says, 0, OptionalInt.empty(), now);
    }

    /** As {@link #answered(WorkerInfo, ServingState, long, OptionalInt, long)} for an answer without holders. */
    boolean answered(WorkerInfo answer, ServingState says, long revision, long now) {
        return answered(answer, says, revision, OptionalInt.empty(), now);
    }

    /**
     * The worker answered at {@code now}, saying whether it takes new work. Returns whether the answer
     * changed what readers may be using (a restart in place, another version, a worker in use that
     * drains): such news is urgent. A refresh that finds the same answer is not.
     *
     * <p>Pushes never go back in time: an answer of the instance last heard from whose
     * {@code revision} is below the highest one taken from it was overtaken on its way (a unary
     * probe's answer sent before a change, delivered after the stream pushed the change). It still
     * proves the worker reachable, but what it says is dropped: the newer answer held stands.
     * Revision 0 (not sent) is taken in the order it arrives. {@code held} is the answer's count of
     * holders (see {@link #holders()}); a change of it alone is not urgent: it changes nobody's use.
     */
    boolean answered(WorkerInfo answer, ServingState says, long revision, OptionalInt held, long now) {
        if (revision != 0 && info != null && answer.instanceId().equals(revisionOf)
                && Long.compareUnsigned(revision, this.revision) < 0) {
            log.debug("worker {}: dropping an answer of revision {}, overtaken by revision {}", url,
                    Long.toUnsignedString(revision), Long.toUnsignedString(this.revision));
            answer = info;
            says = serving;
            held = holders;
        } else if (revision != 0) {
            if (!answer.instanceId().equals(revisionOf) || Long.compareUnsigned(revision, this.revision) > 0) {
                this.revision = revision;
            }
            revisionOf = answer.instanceId();
        }
        lostBecause = null;
        noteChange();
        WorkerInfo answered = withEndpoint(answer, endpoint);
        boolean wasInUse = inUse();
        boolean changed = info != null && !info.equals(answered) || wasInUse && says != ServingState.SERVING;
        if (says != serving && info != null) {
            log.info("worker {} is {}", url, says.name().toLowerCase(Locale.ROOT).replace('_', ' '));
        }
        serving = says;
        holders = says == ServingState.DRAINING ? held : OptionalInt.empty();
        if (info != null && !info.instanceId().equals(answered.instanceId())) {
            log.info("worker {} restarted in place: instance {} -> {}, version '{}' -> '{}'", url,
                    info.instanceId(), answered.instanceId(), info.version(), answered.version());
        }
        info = answered;
        if (upSince == NOT_UP) {
            upSince = now;
        }
        state = State.ANSWERED;
        reason = "";
        return changed;
    }

    /**
     * A probe failed at {@code now} for {@code why}. Flap damping: only a worker that stayed up for
     * {@code stableNanos} starts its backoff over; one that answers and drops again at once keeps
     * backing off further each time. Returns whether readers may have been using it (urgent news).
     */
    boolean failed(String why, long now, long stableNanos) {
        noteChange();
        boolean wasInUse = inUse();
        if (upSince != NOT_UP && now - upSince >= stableNanos) {
            failures = 0;
        }
        upSince = NOT_UP;
        failures++;
        if (lostBecause != null) {
            why = why + " (after " + lostBecause + ")";
        }
        if (state != State.UNREACHABLE || !why.equals(reason)) {
            log.info("worker {} is unreachable: {}; retrying with backoff", url, why);
        }
        state = State.UNREACHABLE;
        reason = why;
        info = null;
        holders = OptionalInt.empty();
        return wasInUse;
    }

    /** A user's call to it failed as if it were gone: out until it answers again. */
    void ejected(String why, long now) {
        ejectedAt = now;
        noteChange();
        log.info("worker {}: a call to it failed ({}); excluding it until it answers again", url, why);
        state = State.RECONNECTING;
        reason = "a call failed (" + why + "); probing again";
    }

    /**
     * Its kept connection dropped, or its stream went silent ({@code why}): it may have restarted or
     * its host may be cut off, so it is out until it answers again over a new connection; the
     * failures until then say {@code why} too.
     */
    void connectionLost(String why) {
        noteChange();
        log.info("worker {}: connection lost ({}); excluding it until it answers again", url, why);
        state = State.RECONNECTING;
        reason = "connection lost (" + why + "); probing again";
        lostBecause = why;
    }

    private static WorkerInfo withEndpoint(WorkerInfo info, WorkerEndpoint endpoint) {
        return info.endpoint().equals(endpoint) ? info
                : new WorkerInfo(endpoint, info.version(), info.instanceId(), info.labels(), info.services(),
                        info.capabilities());
    }

    @Override
    public String toString() {
        return url + " " + state + (reason.isEmpty() ? "" : " (" + reason + ")");
    }
}
