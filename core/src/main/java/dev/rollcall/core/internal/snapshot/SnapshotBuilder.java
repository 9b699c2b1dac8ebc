package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.InternalSnapshots;
import dev.rollcall.api.registry.KeyPaths;
import dev.rollcall.api.registry.ProtoSchema;
import dev.rollcall.api.registry.SelectionReport;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.internal.schema.VersionSchemas;
import dev.rollcall.core.internal.settings.LabelSettings;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
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
 * the snapshot is made from the last: a build reads the churn, not the whole fleet. A
 * change that is not one worker's (a schema arrived) and every other policy read them all. In tests
 * every such build is checked against what reading them all would show ({@link #CHECK_BUILDS}).
 * What each worker's status is, {@link StatusChoice} decides.
 *
 * <p>Confined to the resolver's serial context.
 */
public final class SnapshotBuilder {

    private static final Logger log = LoggerFactory.getLogger(SnapshotBuilder.class);

    /** The system property that turns {@link #CHECK_BUILDS} on; the build's surefire configuration sets it. */
    static final String CHECK_BUILDS_PROPERTY = "dev.rollcall.internal.check-builds";
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
    private final VersionSchemas schemas;       // null when the resolver fetches none
    private final KeyPaths keyPaths;
    /** The selector's, the policy's and the preference's say on the answered workers as a whole. */
    private final PolicyChoice choice;
    /** The workers as the last build showed them, for builds of what changed; null until a full build (direct mode). */
    private ShownFleet shown;
    /** What each worker's status is, reused while nothing in it changed, and the verdicts that changed. */
    private final StatusChoice statusChoice;
    private Map<String, ProtoSchema> publishedSchemas = Map.of();
    private FleetSnapshot last;
    /** What {@link #last}'s selection report says (read once, so that no build makes the report itself). */
    private Optional<String> lastCohort;
    private String lastExplanation;
    private String lastPreference;
    /** Workers tracked without a kept channel because of the cap, for the next snapshot's counts. */
    private int overKeptCap;
    /** {@code rollcall.subset.*}; null when off. */
    private Subset subset;
    /** The URLs of the subset in the build running; null without subsets. */
    private Set<String> members;

    public SnapshotBuilder(VersionPolicy policy, Clock clock, VersionSchemas schemas, KeyPaths keyPaths, LabelSettings labels,
                    LongSupplier ticker, FleetSnapshot initial) {
        this.policy = policy;
        this.choice = new PolicyChoice(policy, labels, ticker);
        this.statusChoice = new StatusChoice(policy);
        this.clock = clock;
        this.schemas = schemas;
        this.keyPaths = keyPaths;
        this.last = initial;
        SelectionReport report = initial.selection();
        this.lastCohort = report.cohort();
        this.lastExplanation = report.explanation();
        this.lastPreference = report.preference();
    }

    /**
     * How many workers are tracked without a kept channel because {@code probe.max-kept-channels}
     * was reached: shown in the counts of the next snapshot built, and a change a reader sees.
     */
    public void overKeptCap(int workers) {
        overKeptCap = workers;
    }

    /**
     * From now on, only {@code subset}'s members of the accepted workers are {@code COMPATIBLE}, the
     * others {@code OUTSIDE_SUBSET}. Every build reads every worker then: a member going changes
     * another worker's status (the next in rank enters).
     */
    public void useSubset(Subset subset) {
        this.subset = subset;
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
        // on it and read in the statuses loop, with no map by URL (maps by URL cost a build as much
        // as the rest of its work on a large fleet).
        boolean direct = direct();
        List<WorkerInfo> answered = direct ? List.of() : new ArrayList<>(workers.size());
        Set<ShownWorker> awaitingSchema = null;
        VersionRuns runs = new VersionRuns(schemas == null ? null : new HashSet<>(), schemaReady);
        // A per-worker rule needs no pass of its own before the statuses: versions and schemas are
        // looked at in the statuses loop (each pass is a walk over objects scattered in the heap, for
        // every snapshot built while converging). The others see the answered workers as a whole first.
        if (!direct) {
            for (ShownWorker t : workers) {
                runs.saw(t.info());
                if (t.inUse() && t.heldOut() == null) {
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
        PolicyChoice.Chosen chosen = PolicyChoice.NO_CHOICE;
        if (!direct) {
            chosen = choice.choose(answered);
        }
        String preferred = choice.prefer(answered, chosen.verdicts());
        if (subset != null) {
            // After the policy and the preference, over the whole fleet: the cohort is every coordinator's.
            Map<String, String> verdicts = chosen.verdicts();
            members = subset.members(workers, t -> t.answered() && "".equals(verdicts.get(t.url())));
        }
        List<WorkerStatus> statuses = new ArrayList<>(workers.size());
        statusChoice.buildStarts();
        for (ShownWorker t : workers) {
            boolean awaitsSchema;
            if (direct) {
                runs.saw(t.info());
                awaitsSchema = t.inUse() && !runs.schemaReady(t);
            } else {
                awaitsSchema = awaitingSchema != null && awaitingSchema.contains(t);
            }
            statuses.add(statusChoice.of(t, awaitsSchema, direct ? null : chosen, members, subset));
        }
        if (schemas != null) {
            schemas.retain(runs.versions);
        }
        if (subset != null) {
            subset.rank(workers); // by the statuses just shown
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
            statusChoice.askAgain();
            return next;
        }
        boolean membership = !changes.joined.isEmpty() || !changes.left.isEmpty();
        if (membership) {
            shown.apply(changes.joined, changes.left);
        }
        boolean changed = membership;
        statusChoice.buildStarts();
        VersionRuns runs = new VersionRuns(new HashSet<>(), schemaReady);
        List<WorkerStatus> statuses = shown.statuses();
        for (ShownWorker t : changes.changed) {
            int i = shown.indexOf(t);
            if (i < 0) {
                continue; // left
            }
            boolean awaitsSchema = schemas != null && t.inUse() && !runs.schemaReady(t);
            WorkerStatus status = statusChoice.of(t, awaitsSchema, null, null, null);
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
        statusChoice.askAgain();
        return publish(shown.statuses(), changed, PolicyChoice.NO_CHOICE, "", staleSince, discoveryProblem);
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
            WorkerStatus expected = statusChoice.of(t, awaitsSchema, null, null, null);
            if (expected != statuses.get(i)) {
                throw new AssertionError("worker " + t + " shows " + statuses.get(i) + ", not " + expected);
            }
        }
        if (!versions.equals(shown.versions())) {
            throw new AssertionError("versions counted " + shown.versions() + ", not the workers' " + versions);
        }
    }

    /** The common case: a per-worker rule, no label rules; verdicts are remembered per answer. */
    private boolean direct() {
        return subset == null && choice.direct();
    }

    /**
     * After a build that left the label preference waiting out its hold: how long until it should
     * be looked at again (0 when nothing waits). The caller asks for a build then.
     */
    public long recheckInNanos() {
        return choice.recheckInNanos();
    }

    /** The snapshot of {@code statuses}, or {@code null} when a reader would see no difference from the last. */
    private FleetSnapshot publish(List<WorkerStatus> statuses, boolean statusesChanged, PolicyChoice.Chosen chosen,
                                  String preferred,
                                  Instant staleSince, String discoveryProblem) {
        Map<String, ProtoSchema> schemasNow = schemas == null ? Map.of() : schemas.known();
        // Snapshot 0 means "nothing known yet": the first set from discovery is news even when empty.
        if (last.number() > 0 && !statusesChanged && schemasNow == publishedSchemas
                && Objects.equals(staleSince, last.staleSince().orElse(null))
                && chosen.cohort().equals(lastCohort) && chosen.explanation().equals(lastExplanation)
                && preferred.equals(lastPreference) && overKeptCap == last.counts().overKeptCap()
                && Objects.equals(discoveryProblem, last.discoveryProblem().orElse(null))) {
            return null;
        }
        statusChoice.logVerdictChanges();
        publishedSchemas = schemasNow;
        // The statuses are copied once here (the list may be a view of the shown fleet, which the next build
        // changes) and handed over: no other copy, no walk through the list's iterator.
        last = InternalSnapshots.buildAfter(FleetSnapshot.builder(last.number() + 1).publishedAt(clock.instant())
                .staleSince(staleSince).policy(policy.description())
                .selection(chosen.cohort(), chosen.explanation()).schemas(schemasNow).keyPaths(keyPaths)
                .selector(choice.selector().toString()).preference(preferred).discoveryProblem(discoveryProblem)
                .overKeptCap(overKeptCap), statuses.toArray(new WorkerStatus[0]), last);
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
}
