package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a snapshot shows of each worker, for the {@link SnapshotBuilder}: its status (held out,
 * draining, not serving, waiting for its version's schema, or the policy's verdict), the same
 * status object as the last build's while nothing in it changed, a per-worker rule's verdict
 * remembered on the worker until it answers something else, and the verdicts that changed, logged
 * once per published snapshot. Confined to the resolver's serial context, as the builder.
 */
final class StatusChoice {

    /** Verdict lines log as the builder's: users set the level of {@code SnapshotBuilder}. */
    private static final Logger log = LoggerFactory.getLogger(SnapshotBuilder.class);
    private static final Verdict NO_VERDICT = Verdict.reject("policy returned no verdict");

    private final VersionPolicy policy;
    /** Workers the policy threw on in the build running: read again by the next (null when none). */
    private List<ShownWorker> unverdicted;
    /** The verdict changes found by the build running, for the log; null when none. */
    private List<WorkerStatus> verdictChanges;

    StatusChoice(VersionPolicy policy) {
        this.policy = policy;
    }

    /** A build starts: it has found no verdict change yet. */
    void buildStarts() {
        verdictChanges = null;
    }

    /** Workers the policy threw on are read again by the next build, as if they had changed. */
    void askAgain() {
        if (unverdicted != null) {
            unverdicted.forEach(w -> w.shownState().noteChange());
            unverdicted = null;
        }
    }

    /**
     * What a snapshot shows of {@code t}: its status object from the last build while nothing in it
     * changed, else a new one (remembered on it). {@code chosen} is the policy's choice as a whole,
     * {@code null} for a per-worker rule (its verdict remembered on {@code t}). With subsets,
     * {@code members} are the subset's URLs and {@code subset} says why the others are outside it;
     * both null without.
     */
    WorkerStatus of(ShownWorker t, boolean awaitsSchema, PolicyChoice.Chosen chosen, Set<String> members,
                    Subset subset) {
        WorkerInfo info = t.info();
        State state = t.shownBeforePolicy();
        String reason = t.reason();
        boolean serving = t.serving() == ServingState.SERVING;
        OptionalInt holders = OptionalInt.empty();
        ShownWorker.Held held = t.heldOut();
        if (held != null) {
            info = held.info(); // fixed while held: its answers meanwhile make no new status
            state = State.REJECTED;
            reason = held.reason();
        } else if (t.answered() && !serving) {
            boolean draining = t.serving() == ServingState.DRAINING;
            state = draining ? State.DRAINING : State.NOT_SERVING;
            reason = !draining ? "not serving yet: takes no work until it says it is ready"
                    : WorkerEndpoint.STATE_DRAINING.equals(
                            t.endpoint().labels().get(WorkerEndpoint.STATE_LABEL))
                    ? "draining: discovery says it is on its way out (terminating), takes no new work"
                    : "draining: finishing its work in flight, takes no new work";
            if (draining) {
                holders = t.holders();
            }
        } else if (awaitsSchema) {
            state = State.PENDING;
            reason = "fetching the schema of version '" + t.info().version() + "'";
        } else if (t.answered()) {
            reason = chosen == null ? verdictOf(t)
                    : chosen.verdicts().getOrDefault(t.url(), "the policy made no decision about it");
            state = reason.isEmpty() ? State.COMPATIBLE : State.REJECTED;
            if (members != null && state == State.COMPATIBLE && !members.contains(t.url())) {
                state = State.OUTSIDE_SUBSET;
                reason = subset.reason();
            }
        }
        ShownState shown = t.shownState();
        WorkerStatus status = shown.status;
        if (status == null || status.state() != state || !status.reason().equals(reason)
                || status.endpoint() != t.endpoint() || shown.statusInfo != info || !status.holders().equals(holders)) {
            WorkerStatus was = status;
            // A new count of holders is a new status, so a new snapshot: it changes only while draining.
            status = new WorkerStatus(t.endpoint(), state, reason, Optional.ofNullable(info), holders);
            shown.status = status;
            shown.statusInfo = info;
            // Verdicts that changed, for the log: found here, where a changed status gets a new
            // object, rather than by walking the whole last snapshot beside the new one.
            if (log.isInfoEnabled() && (state == State.COMPATIBLE || state == State.REJECTED)
                    && (was == null || was.state() != state || !was.reason().equals(reason))) {
                if (verdictChanges == null) {
                    verdictChanges = new ArrayList<>();
                }
                verdictChanges.add(status);
            }
        }
        return status;
    }

    /**
     * A per-worker rule's verdict on {@code t}'s answer, as {@code PolicyChoice.checkEach} gives it ("" when
     * accepted), remembered on the worker until it answers something else.
     */
    private String verdictOf(ShownWorker t) {
        WorkerInfo info = t.info();
        ShownState shown = t.shownState();
        String reason = shown.checkedInfo == info ? shown.verdict : null;
        if (reason == null) {
            try {
                Verdict v = Objects.requireNonNullElse(policy.check(info), NO_VERDICT);
                reason = v.accepted() ? "" : v.reason();
                shown.checkedInfo = info;
                shown.verdict = reason;
            } catch (RuntimeException e) {
                reason = "policy failed: " + e; // not remembered: tried again next time
                if (unverdicted == null) {
                    unverdicted = new ArrayList<>();
                }
                unverdicted.add(t);
            }
        }
        return reason;
    }

    /**
     * One INFO line per worker whose verdict changed: it became compatible or rejected, or was
     * rejected for another reason. A worker's status object is replaced whenever what it shows
     * changes ({@link ShownState#status}), and the old one is what the last snapshot showed.
     */
    void logVerdictChanges() {
        if (verdictChanges == null) {
            return;
        }
        for (WorkerStatus s : verdictChanges) {
            // Answers are checked before they get here; escaped all the same, as every peer text in a log line.
            String version = s.info().map(i -> i.version().isEmpty() ? WorkerInfo.NO_VERSION
                    : "'" + PeerText.escape(i.version()) + "'").orElse("unknown");
            if (s.state() == State.COMPATIBLE) {
                log.info("worker {} is compatible (version {})", s.endpoint().url(), version);
            } else {
                log.info("worker {} is rejected (version {}): {}", s.endpoint().url(), version, s.reason());
            }
        }
    }
}
