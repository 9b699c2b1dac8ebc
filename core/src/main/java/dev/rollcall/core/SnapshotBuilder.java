package dev.rollcall.core;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.KeyPaths;
import dev.rollcall.api.registry.ProtoSchema;
import dev.rollcall.api.registry.SelectionReport;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the tracked workers into the next snapshot: asks the policy, holds back workers whose
 * version's schema is still being fetched, reuses unchanged statuses, and says whether anything a
 * reader sees changed. No network and no timers: {@link PublishPacer} decides when it runs.
 *
 * <p>Confined to the resolver's serial context.
 */
final class SnapshotBuilder {

    private static final Logger log = LoggerFactory.getLogger(SnapshotBuilder.class);
    private static final Verdict NO_VERDICT = Verdict.reject("policy returned no verdict");

    private final VersionPolicy policy;
    private final Clock clock;
    /** Whether the policy is a per-worker rule (keeps {@link VersionPolicy}'s own select): see {@link #checkEach}. */
    private final boolean perWorkerPolicy;
    private final VersionSchemas schemas;       // null when the resolver fetches none
    private final KeyPaths keyPaths;
    private Map<WorkerInfo, Verdict> checked = new IdentityHashMap<>();
    private Map<String, ProtoSchema> publishedSchemas = Map.of();
    private FleetSnapshot last;

    SnapshotBuilder(VersionPolicy policy, Clock clock, VersionSchemas schemas, KeyPaths keyPaths, FleetSnapshot initial) {
        this.policy = policy;
        this.clock = clock;
        this.perWorkerPolicy = keepsDefaultSelect(policy);
        this.schemas = schemas;
        this.keyPaths = keyPaths;
        this.last = initial;
    }

    /**
     * Whether {@code policy} keeps {@link VersionPolicy#select}'s default: then it is a rule about one
     * worker and its verdicts may be remembered per answer (the SPI's documented contract). The SPI
     * has no other way to say so; this is the one place that asks.
     */
    private static boolean keepsDefaultSelect(VersionPolicy policy) {
        try {
            return policy.getClass().getMethod("select", List.class).getDeclaringClass() == VersionPolicy.class;
        } catch (NoSuchMethodException impossible) {
            return false;
        }
    }

    /** The last snapshot built (or the initial one). */
    FleetSnapshot last() {
        return last;
    }

    /**
     * The snapshot of {@code workers} (in URL order) or {@code null} when a reader would see no
     * difference from the last one. {@code schemaReady} says whether an answered worker's version
     * schema is known (see {@link VersionSchemas#ready}).
     */
    FleetSnapshot build(Collection<TrackedWorker> workers, Instant staleSince, Predicate<TrackedWorker> schemaReady) {
        List<WorkerInfo> answered = new ArrayList<>();
        Set<TrackedWorker> awaitingSchema = null;
        Set<String> versions = schemas == null ? null : new HashSet<>();
        for (TrackedWorker t : workers) {
            if (versions != null && t.info() != null) {
                versions.add(t.info().version());
            }
            if (t.state() == TrackedWorker.State.ANSWERED) {
                if (schemas == null || schemaReady.test(t)) {
                    answered.add(t.info());
                } else {
                    if (awaitingSchema == null) {
                        awaitingSchema = new HashSet<>();
                    }
                    awaitingSchema.add(t);
                }
            }
        }
        if (schemas != null) {
            schemas.retain(versions);
        }
        Map<String, ProtoSchema> schemasNow = schemas == null ? Map.of() : schemas.known();
        Chosen chosen = select(answered);
        List<WorkerStatus> statuses = new ArrayList<>(workers.size());
        for (TrackedWorker t : workers) {
            State state = t.state().shown;
            String reason = t.reason();
            if (awaitingSchema != null && awaitingSchema.contains(t)) {
                state = State.PENDING;
                reason = "fetching the schema of version '" + t.info().version() + "'";
            } else if (t.state() == TrackedWorker.State.ANSWERED) {
                reason = chosen.verdicts().getOrDefault(t.url, "the policy made no decision about it");
                state = reason.isEmpty() ? State.COMPATIBLE : State.REJECTED;
            }
            WorkerStatus shown = t.shown;
            if (shown == null || shown.state() != state || !shown.reason().equals(reason)
                    || shown.endpoint() != t.endpoint() || shown.info().orElse(null) != t.info()) {
                shown = new WorkerStatus(t.endpoint(), state, reason, Optional.ofNullable(t.info()));
                t.shown = shown;
            }
            statuses.add(shown);
        }
        // Snapshot 0 means "nothing known yet": the first set from discovery is news even when empty.
        SelectionReport before = last.selection();
        if (last.number() > 0 && statuses.equals(last.statuses()) && schemasNow == publishedSchemas
                && Objects.equals(staleSince, last.staleSince().orElse(null))
                && chosen.cohort().equals(before.cohort()) && chosen.explanation().equals(before.explanation())) {
            return null;
        }
        logVerdictChanges(statuses);
        publishedSchemas = schemasNow;
        last = FleetSnapshot.builder(last.number() + 1).publishedAt(clock.instant()).staleSince(staleSince)
                .policy(policy.description()).statuses(statuses).selection(chosen.cohort(), chosen.explanation())
                .schemas(schemasNow).keyPaths(keyPaths).build();
        // Once per change of choice at INFO; the explanation's counts move with every probe answer.
        if (!chosen.cohort().equals(before.cohort())) {
            log.info("snapshot {}: {}", last.number(), last.selection().summary());
        } else if (!chosen.explanation().equals(before.explanation()) && log.isDebugEnabled()) {
            log.debug("snapshot {}: {}", last.number(), last.selection().summary());
        }
        return last;
    }

    /**
     * What the policy chose: URL to "" for accepted workers or to the reason they were rejected,
     * and the cohort and explanation it gave.
     */
    private record Chosen(Map<String, String> verdicts, Optional<String> cohort, String explanation) {
    }

    private Chosen select(List<WorkerInfo> answered) {
        Map<String, String> verdicts = new HashMap<>();
        if (answered.isEmpty()) {
            checked = new IdentityHashMap<>();
            return new Chosen(verdicts, Optional.empty(), "");
        }
        if (perWorkerPolicy) {
            return checkEach(answered, verdicts);
        }
        Selection selection;
        try {
            selection = Objects.requireNonNull(policy.select(List.copyOf(answered)), "the policy returned no selection");
        } catch (RuntimeException e) {
            log.error("policy {} failed; rejecting every worker until it succeeds", policy.description(), e);
            answered.forEach(w -> verdicts.put(w.endpoint().url(), "policy failed: " + e));
            return new Chosen(verdicts, Optional.empty(), "policy failed: " + e);
        }
        for (Selection.Rejection r : selection.rejected()) {
            verdicts.put(r.worker().endpoint().url(), r.reason().isEmpty() ? "rejected by the policy" : r.reason());
        }
        for (WorkerInfo w : selection.accepted()) {
            // A worker in both lists is rejected: fail closed on an inconsistent policy.
            verdicts.putIfAbsent(w.endpoint().url(), "");
        }
        return new Chosen(verdicts, selection.cohort(), selection.explanation());
    }

    /**
     * A per-worker rule's choice, as {@link VersionPolicy#select}'s default makes it, but checking
     * each answer once rather than every worker for every snapshot: {@code check} decides by what the
     * worker reported, and an answer is a new {@link WorkerInfo} object whenever that changes. At
     * 10,000 workers re-checking was 60 % of building a snapshot (a semver parse per worker). A
     * check that throws is not remembered: it is tried again with the next snapshot.
     */
    private Chosen checkEach(List<WorkerInfo> answered, Map<String, String> byUrl) {
        Map<WorkerInfo, Verdict> known = new IdentityHashMap<>(answered.size() * 2);
        for (WorkerInfo w : answered) {
            Verdict v = checked.get(w);
            if (v == null) {
                try {
                    v = Objects.requireNonNullElse(policy.check(w), NO_VERDICT);
                    known.put(w, v);
                } catch (RuntimeException e) {
                    v = Verdict.reject("policy failed: " + e);
                }
            } else {
                known.put(w, v);
            }
            byUrl.put(w.endpoint().url(), v.accepted() ? "" : v.reason());
        }
        checked = known;
        return new Chosen(byUrl, Optional.empty(), "");
    }

    private void logVerdictChanges(List<WorkerStatus> statuses) {
        if (!log.isInfoEnabled()) {
            return;
        }
        // Both lists are in URL order: walk them side by side.
        List<WorkerStatus> before = last.statuses();
        int j = 0;
        for (WorkerStatus s : statuses) {
            if (s.state() != State.COMPATIBLE && s.state() != State.REJECTED) {
                continue;
            }
            String url = s.endpoint().url();
            while (j < before.size() && before.get(j).endpoint().url().compareTo(url) < 0) {
                j++;
            }
            WorkerStatus b = j < before.size() && before.get(j).endpoint().url().equals(url) ? before.get(j) : null;
            boolean changed = b != s && (b == null || b.state() != s.state() || !b.reason().equals(s.reason()));
            if (!changed) {
                continue;
            }
            String version = s.info().map(i -> "'" + i.version() + "'").orElse("unknown");
            if (s.state() == State.COMPATIBLE) {
                log.info("worker {} is compatible (version {})", url, version);
            } else {
                log.info("worker {} is rejected (version {}): {}", url, version, s.reason());
            }
        }
    }
}
