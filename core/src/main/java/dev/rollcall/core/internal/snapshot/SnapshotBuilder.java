package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.labels.LabelSelector;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.KeyPaths;
import dev.rollcall.api.registry.ProtoSchema;
import dev.rollcall.api.registry.SelectionReport;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.internal.schema.VersionSchemas;
import dev.rollcall.core.internal.settings.LabelSettings;
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
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the tracked workers into the next snapshot: asks the policy, holds back workers whose
 * version's schema is still being fetched, reuses unchanged statuses, and says whether anything a
 * reader sees changed. No network and no timers: {@link PublishPacer} decides when it runs.
 *
 * <p>With a per-worker rule and no label rules (the default) a build reads only the workers that
 * joined, left or changed since the last one ({@link Changes}, kept in {@link ShownFleet}), and
 * the snapshot is made from the last: a churn of 100 of 10,000 workers reads 100, not 10,000. A
 * change that is not one worker's (a schema arrived) and every other policy read them all. In tests
 * every such build is checked against what reading them all would show ({@link #CHECK_BUILDS}).
 *
 * <p>Confined to the resolver's serial context.
 */
public final class SnapshotBuilder {

    private static final Logger log = LoggerFactory.getLogger(SnapshotBuilder.class);
    private static final Verdict NO_VERDICT = Verdict.reject("policy returned no verdict");

    /** The system property that turns {@link #CHECK_BUILDS} on; the build's surefire configuration sets it. */
    static final String CHECK_BUILDS_PROPERTY = "rollcall.internal.check-builds";
    /**
     * Whether every build of what changed is checked against what a build reading every worker
     * would show: in every test run (the build sets {@link #CHECK_BUILDS_PROPERTY}, and {@code -ea}
     * turns it on too), off in production, where it would make each build read the whole fleet. A
     * constant, so that the JIT drops the check when it is off.
     */
    static final boolean CHECK_BUILDS = Boolean.getBoolean(CHECK_BUILDS_PROPERTY)
            || SnapshotBuilder.class.desiredAssertionStatus();

    private final VersionPolicy policy;
    private final Clock clock;
    /** Whether the policy is a per-worker rule (keeps {@link VersionPolicy}'s own select): see {@link #checkEach}. */
    private final boolean perWorkerPolicy;
    private final VersionSchemas schemas;       // null when the resolver fetches none
    private final KeyPaths keyPaths;
    private final LabelSelector selector;
    private final LabelPreference preference;  // null when none is configured
    private final LongSupplier ticker;
    private Map<WorkerInfo, Verdict> checked = new IdentityHashMap<>();
    /** The workers as the last build showed them, for builds of what changed; null until a full build (direct mode). */
    private ShownFleet shown;
    /** Workers the policy threw on in the build running: read again by the next (null when none). */
    private List<ShownWorker> unverdicted;
    /** The verdict changes found by the build running, for the log; null when none. */
    private List<WorkerStatus> verdictChanges;
    /** The selector's verdict per answer ("" when it matches), remembered like {@link #checked}. */
    private Map<WorkerInfo, String> selected = new IdentityHashMap<>();
    private long recheckInNanos;
    private Map<String, ProtoSchema> publishedSchemas = Map.of();
    private FleetSnapshot last;
    /** What {@link #last}'s selection report says (read once, so that no build makes the report itself). */
    private Optional<String> lastCohort;
    private String lastExplanation;
    private String lastPreference;

    public SnapshotBuilder(VersionPolicy policy, Clock clock, VersionSchemas schemas, KeyPaths keyPaths, LabelSettings labels,
                    LongSupplier ticker, FleetSnapshot initial) {
        this.policy = policy;
        this.selector = labels.selector();
        this.preference = labels.prefers() ? new LabelPreference(labels) : null;
        this.ticker = ticker;
        this.clock = clock;
        this.perWorkerPolicy = keepsDefaultSelect(policy);
        this.schemas = schemas;
        this.keyPaths = keyPaths;
        this.last = initial;
        SelectionReport report = initial.selection();
        this.lastCohort = report.cohort();
        this.lastExplanation = report.explanation();
        this.lastPreference = report.preference();
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
    public FleetSnapshot last() {
        return last;
    }

    /**
     * The snapshot of {@code workers} (in URL order) or {@code null} when a reader would see no
     * difference from the last one. {@code staleSince} and {@code discoveryProblem} are null while
     * discovery is healthy. {@code schemaReady} says whether an answered worker's version
     * schema is known (see {@link VersionSchemas#ready}).
     */
    public FleetSnapshot build(Collection<? extends ShownWorker> workers, Instant staleSince, String discoveryProblem,
                        Predicate<ShownWorker> schemaReady) {
        // The common case, a per-worker rule without labels rules: each worker's verdict is remembered
        // on it and read in the statuses loop, with no map by URL (at 10,000 workers the maps were a
        // third of a build).
        boolean direct = direct();
        List<WorkerInfo> answered = direct ? List.of() : new ArrayList<>(workers.size());
        Set<ShownWorker> awaitingSchema = null;
        VersionRuns runs = new VersionRuns(schemas == null ? null : new HashSet<>(), schemaReady);
        // A per-worker rule needs no pass of its own before the statuses: versions and schemas are
        // looked at in the statuses loop (at 10,000 workers, each pass over them is a pass over
        // 10,000 objects scattered in the heap, for every snapshot built while converging). The
        // others see the answered workers as a whole first.
        if (!direct) {
            for (ShownWorker t : workers) {
                runs.saw(t.info());
                if (t.inUse()) {
                    if (runs.schemaReady(t)) {
                        answered.add(t.info());
                    } else {
                        if (awaitingSchema == null) {
                            awaitingSchema = new HashSet<>();
                        }
                        awaitingSchema.add(t);
                    }
                }
            }
        }
        Chosen chosen = NO_CHOICE;
        if (!direct) {
            Map<String, String> rejectedBySelector = new HashMap<>();
            chosen = select(selector.isEmpty() ? answered : selectByLabels(answered, rejectedBySelector));
            chosen.verdicts().putAll(rejectedBySelector);
        }
        String preferred = preference == null ? "" : prefer(answered, chosen.verdicts());
        List<WorkerStatus> statuses = new ArrayList<>(workers.size());
        verdictChanges = null;
        for (ShownWorker t : workers) {
            boolean awaitsSchema;
            if (direct) {
                runs.saw(t.info());
                awaitsSchema = t.inUse() && !runs.schemaReady(t);
            } else {
                awaitsSchema = awaitingSchema != null && awaitingSchema.contains(t);
            }
            statuses.add(statusOf(t, awaitsSchema, direct ? null : chosen));
        }
        if (schemas != null) {
            schemas.retain(runs.versions);
        }
        return publish(statuses, !same(statuses, last.statuses()), chosen, preferred, staleSince, discoveryProblem);
    }

    /**
     * The next snapshot from what changed since the last build ({@code changes}, which it empties):
     * only the workers that joined, left or noted a change are read, and the snapshot is made from
     * the last one (see {@link FleetSnapshot.Builder#previous}). With a per-worker rule and no label
     * rules, the default; otherwise, for the first build, and after a change that is not one
     * worker's ({@link Changes#everything}), every worker in {@code all} (URL order) is read, as
     * {@link #build(Collection, Instant, String, Predicate)} does. Returns {@code null} when a reader
     * would see no difference.
     */
    public FleetSnapshot build(Changes changes, Supplier<? extends List<? extends ShownWorker>> all, Instant staleSince,
                        String discoveryProblem, Predicate<ShownWorker> schemaReady) {
        if (!direct() || changes.everything || shown == null) {
            List<? extends ShownWorker> workers = all.get();
            changes.clear();
            FleetSnapshot next = build(workers, staleSince, discoveryProblem, schemaReady);
            if (direct()) {
                if (shown == null) {
                    shown = new ShownFleet();
                }
                shown.reset(workers); // each worker's status is the one this build showed
            } else {
                shown = null;
            }
            askAgain();
            return next;
        }
        boolean membership = !changes.joined.isEmpty() || !changes.left.isEmpty();
        if (membership) {
            shown.apply(changes.joined, changes.left);
        }
        boolean changed = membership;
        verdictChanges = null;
        VersionRuns runs = new VersionRuns(new HashSet<>(), schemaReady);
        List<WorkerStatus> statuses = shown.statuses();
        for (ShownWorker t : changes.changed) {
            int i = shown.indexOf(t);
            if (i < 0) {
                continue; // left
            }
            boolean awaitsSchema = schemas != null && t.inUse() && !runs.schemaReady(t);
            WorkerStatus status = statusOf(t, awaitsSchema, null);
            if (status != statuses.get(i)) {
                changed = true;
            }
            shown.show(i, t, status);
        }
        changes.clear();
        if (schemas != null) {
            schemas.retain(shown.versions());
        }
        if (CHECK_BUILDS) {
            checkAgainstFullBuild(all.get());
        }
        askAgain();
        return publish(shown.statuses(), changed, NO_CHOICE, "", staleSince, discoveryProblem);
    }

    /**
     * Throws {@link AssertionError} unless the statuses kept are what a build reading every worker
     * would show: a worker that changed without noting it shows a stale status, and this finds it.
     * Reads every worker, so only with {@link #CHECK_BUILDS}.
     */
    private void checkAgainstFullBuild(List<? extends ShownWorker> all) {
        List<ShownWorker> kept = shown.workers();
        List<WorkerStatus> statuses = shown.statuses();
        if (!kept.equals(all)) {
            throw new AssertionError("kept workers " + kept + " are not the tracked ones " + all);
        }
        Set<String> versions = new HashSet<>();
        for (int i = 0; i < all.size(); i++) {
            ShownWorker t = all.get(i);
            if (t.info() != null) {
                versions.add(t.info().version());
            }
            boolean awaitsSchema = schemas != null && t.inUse() && !schemas.readyNow(t.info().version());
            WorkerStatus expected = statusOf(t, awaitsSchema, null);
            if (expected != statuses.get(i)) {
                throw new AssertionError("worker " + t + " shows " + statuses.get(i) + ", not " + expected);
            }
        }
        if (!versions.equals(shown.versions())) {
            throw new AssertionError("versions counted " + shown.versions() + ", not the workers' " + versions);
        }
    }

    /** Workers the policy threw on are read again by the next build, as if they had changed. */
    private void askAgain() {
        if (unverdicted != null) {
            unverdicted.forEach(w -> w.shownState().noteChange());
            unverdicted = null;
        }
    }

    /** The common case: a per-worker rule, no label rules; verdicts are remembered per answer. */
    private boolean direct() {
        return perWorkerPolicy && selector.isEmpty() && preference == null;
    }

    /**
     * What a snapshot shows of {@code t}: its status object from the last build while nothing in it
     * changed, else a new one (remembered on it). {@code chosen} is the policy's choice as a whole,
     * {@code null} for a per-worker rule (its verdict remembered on {@code t}).
     */
    private WorkerStatus statusOf(ShownWorker t, boolean awaitsSchema, Chosen chosen) {
        WorkerInfo info = t.info();
        State state = t.shownBeforePolicy();
        String reason = t.reason();
        boolean serving = t.serving() == ServingState.SERVING;
        if (t.answered() && !serving) {
            boolean draining = t.serving() == ServingState.DRAINING;
            state = draining ? State.DRAINING : State.NOT_SERVING;
            reason = !draining ? "not serving yet: takes no work until it says it is ready"
                    : WorkerEndpoint.STATE_DRAINING.equals(
                            t.endpoint().labels().get(WorkerEndpoint.STATE_LABEL))
                    ? "draining: discovery says it is on its way out (terminating), takes no new work"
                    : "draining: finishing its work in flight, takes no new work";
        } else if (awaitsSchema) {
            state = State.PENDING;
            reason = "fetching the schema of version '" + t.info().version() + "'";
        } else if (t.answered()) {
            reason = chosen == null ? verdictOf(t)
                    : chosen.verdicts().getOrDefault(t.url(), "the policy made no decision about it");
            state = reason.isEmpty() ? State.COMPATIBLE : State.REJECTED;
        }
        ShownState shown = t.shownState();
        WorkerStatus status = shown.status;
        if (status == null || status.state() != state || !status.reason().equals(reason)
                || status.endpoint() != t.endpoint() || shown.statusInfo != info) {
            WorkerStatus was = status;
            status = new WorkerStatus(t.endpoint(), state, reason, Optional.ofNullable(info));
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

    /** The snapshot of {@code statuses}, or {@code null} when a reader would see no difference from the last. */
    private FleetSnapshot publish(List<WorkerStatus> statuses, boolean statusesChanged, Chosen chosen, String preferred,
                                  Instant staleSince, String discoveryProblem) {
        Map<String, ProtoSchema> schemasNow = schemas == null ? Map.of() : schemas.known();
        // Snapshot 0 means "nothing known yet": the first set from discovery is news even when empty.
        if (last.number() > 0 && !statusesChanged && schemasNow == publishedSchemas
                && Objects.equals(staleSince, last.staleSince().orElse(null))
                && chosen.cohort().equals(lastCohort) && chosen.explanation().equals(lastExplanation)
                && preferred.equals(lastPreference)
                && Objects.equals(discoveryProblem, last.discoveryProblem().orElse(null))) {
            return null;
        }
        if (verdictChanges != null) {
            logVerdictChanges(verdictChanges);
        }
        publishedSchemas = schemasNow;
        last = FleetSnapshot.builder(last.number() + 1).publishedAt(clock.instant()).staleSince(staleSince)
                .policy(policy.description()).statuses(statuses).selection(chosen.cohort(), chosen.explanation())
                .schemas(schemasNow).keyPaths(keyPaths).selector(selector.toString()).preference(preferred)
                .discoveryProblem(discoveryProblem).previous(last).build();
        // Once per change of choice at INFO; the explanation's counts move with every probe answer.
        boolean preferenceSwitched = preferred.startsWith("preferring") != lastPreference.startsWith("preferring");
        if (!chosen.cohort().equals(lastCohort) || preferenceSwitched) {
            log.info("snapshot {}: {}", last.number(), last.selection().summary());
        } else if (!chosen.explanation().equals(lastExplanation) && log.isDebugEnabled()) {
            log.debug("snapshot {}: {}", last.number(), last.selection().summary());
        }
        lastCohort = chosen.cohort();
        lastExplanation = chosen.explanation();
        lastPreference = preferred;
        return last;
    }

    /**
     * Whether two status lists are equal; unchanged workers keep their status object
     * ({@link ShownState#status}), so most elements compare by identity.
     */
    private static boolean same(List<WorkerStatus> a, List<WorkerStatus> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            WorkerStatus x = a.get(i);
            WorkerStatus y = b.get(i);
            if (x != y && !x.equals(y)) {
                return false;
            }
        }
        return true;
    }

    /**
     * After a build that left the label preference waiting out its hold: how long until it should
     * be looked at again (0 when nothing waits). The caller asks for a build then.
     */
    public long recheckInNanos() {
        return recheckInNanos;
    }

    /**
     * The workers whose labels match the selector; every other one is rejected with the requirement
     * it fails, before the policy sees it (so a custom policy never has to know about labels).
     * Verdicts are remembered per answer, as {@link #checkEach} does; the rejected go into
     * {@code rejected} (URL to reason).
     */
    private List<WorkerInfo> selectByLabels(List<WorkerInfo> answered, Map<String, String> rejected) {
        Map<WorkerInfo, String> known = new IdentityHashMap<>(answered.size() * 2);
        List<WorkerInfo> eligible = new ArrayList<>(answered.size());
        for (WorkerInfo w : answered) {
            String why = selected.get(w);
            if (why == null) {
                why = selector.mismatch(labels(w)).orElse("");
            }
            known.put(w, why);
            if (why.isEmpty()) {
                eligible.add(w);
            } else {
                rejected.put(w.endpoint().url(), why + " (rollcall.selector)");
            }
        }
        selected = known;
        return eligible;
    }

    /**
     * A worker's labels: those discovery reported, overridden by those the worker itself reported.
     * The worker's answer wins on a conflict because it is what was verified (discovery's labels
     * can be stale or written by someone else).
     */
    static Map<String, String> labels(WorkerInfo w) {
        Map<String, String> fromDiscovery = w.endpoint().labels();
        if (fromDiscovery.isEmpty()) {
            return w.labels();
        }
        if (w.labels().isEmpty()) {
            return fromDiscovery;
        }
        Map<String, String> merged = new HashMap<>(fromDiscovery);
        merged.putAll(w.labels());
        return merged;
    }

    /**
     * Applies the label preference to the policy's verdicts: while it applies, compatible workers
     * that do not match it are held back. Returns what applied, for the snapshot's report.
     */
    private String prefer(List<WorkerInfo> answered, Map<String, String> verdicts) {
        int compatible = 0;
        List<String> notPreferred = new ArrayList<>(); // compatible ones that do not match, by URL
        for (WorkerInfo w : answered) {
            String url = w.endpoint().url();
            if ("".equals(verdicts.get(url))) {
                compatible++;
                if (!preference.selector().matches(labels(w))) {
                    notPreferred.add(url);
                }
            }
        }
        LabelPreference.Decision d = preference.decide(compatible - notPreferred.size(), compatible,
                ticker.getAsLong());
        recheckInNanos = d.recheckInNanos();
        if (d.preferring()) {
            String why = "held back: " + d.explanation() + " (rollcall.prefer-labels)";
            notPreferred.forEach(url -> verdicts.put(url, why));
        }
        return d.explanation();
    }

    /**
     * One build's look at the workers' versions, which come in runs (workers of one version one after
     * another): each run adds its version to {@link #versions} and asks whether its schema is ready
     * once, not once per worker (that cannot change within a build). Without schemas ({@code versions}
     * null) every schema counts as ready.
     */
    private static final class VersionRuns {
        final Set<String> versions;
        private final Predicate<ShownWorker> ready;
        private String added;
        private String asked;
        private boolean answer = true;

        VersionRuns(Set<String> versions, Predicate<ShownWorker> ready) {
            this.versions = versions;
            this.ready = ready;
        }

        /** A worker's answer ({@code null} before its first). */
        void saw(WorkerInfo info) {
            if (versions != null && info != null && info.version() != added) {
                added = info.version();
                versions.add(added);
            }
        }

        /** Whether the schema of {@code t}'s version (it answered) is known, or none is fetched. */
        boolean schemaReady(ShownWorker t) {
            if (versions != null && t.info().version() != asked) {
                asked = t.info().version();
                answer = ready.test(t);
            }
            return answer;
        }
    }

    /**
     * What the policy chose: URL to "" for accepted workers or to the reason they were rejected,
     * and the cohort and explanation it gave.
     */
    private record Chosen(Map<String, String> verdicts, Optional<String> cohort, String explanation) {
    }

    /** What a per-worker rule "chose" as a whole: no cohort, no explanation (verdicts are per worker). */
    private static final Chosen NO_CHOICE = new Chosen(Map.of(), Optional.empty(), "");

    /**
     * A per-worker rule's verdict on {@code t}'s answer, as {@link #checkEach} gives it ("" when
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

    private Chosen select(List<WorkerInfo> answered) {
        Map<String, String> verdicts = new HashMap<>(answered.size() * 4 / 3 + 16);
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

    /**
     * One INFO line per worker whose verdict changed: it became compatible or rejected, or was
     * rejected for another reason. A worker's status object is replaced whenever what it shows
     * changes ({@link ShownState#status}), and the old one is what the last snapshot showed.
     */
    private static void logVerdictChanges(List<WorkerStatus> changed) {
        for (WorkerStatus s : changed) {
            String version = s.info().map(i -> "'" + i.version() + "'").orElse("unknown");
            if (s.state() == State.COMPATIBLE) {
                log.info("worker {} is compatible (version {})", s.endpoint().url(), version);
            } else {
                log.info("worker {} is rejected (version {}): {}", s.endpoint().url(), version, s.reason());
            }
        }
    }
}
