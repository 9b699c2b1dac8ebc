package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.internal.drain.DrainReleases;
import dev.rollcall.core.internal.probe.ProbeScheduler;
import dev.rollcall.core.internal.probe.ProbeTransport;
import dev.rollcall.core.internal.schema.VersionSchemas;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.settings.ProbeSettings;
import dev.rollcall.core.internal.snapshot.Changes;
import dev.rollcall.core.internal.snapshot.PublishPacer;
import dev.rollcall.core.internal.snapshot.SnapshotBuilder;
import dev.rollcall.core.internal.snapshot.Subset;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.ManagedChannel;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the resolver knows about the fleet, and the only code that changes it: applies
 * discovery's candidate sets and failures and the probes' outcomes to the {@link TrackedWorker}s,
 * and says what changed to the {@link PublishPacer}. Probing is {@link ProbeScheduler}'s job,
 * building snapshots {@link SnapshotBuilder}'s.
 *
 * <p>Confined to the resolver's serial context: every method runs there, so the state needs no
 * locks (the pattern of grpc-java's {@code SynchronizationContext}).
 */
public final class FleetTracker implements ProbeScheduler.Owner<TrackedWorker> {

    private static final Logger log = LoggerFactory.getLogger(FleetTracker.class);

    private final SerialContext context;
    private final ProbeSettings settings;
    private final Clock clock;
    private final ProbeScheduler<TrackedWorker> probes;
    private final SnapshotBuilder builder;
    private final PublishPacer pacer;
    private final VersionSchemas schemas;       // null when the resolver fetches none
    private final Consumer<FleetSnapshot> publisher;
    /** The candidates tracked now, by URL. */
    private final TrackedWorkers tracked = new TrackedWorkers();
    /** Who joined, left or changed since the last build: what the next build reads. */
    private final Changes changes = new Changes();
    /** Workers that left discovery whose connections are still open. */
    private final Leavers leavers;
    /** Reads discovery's sets against the tracked workers: as changes, against the set before, or whole. */
    private final SetReader reader = new SetReader(tracked);
    private Instant staleSince;
    /** Why discovery is failing (this outage's first cause), or null while it is healthy. */
    private String discoveryProblem;
    /** Why the cache file was not started from, until discovery answers; null when it was, or none is kept. */
    private String cacheProblem;
    private boolean discoveryAnswered;
    private boolean candidatesKnown;            // from discovery, or from the cache file
    private CandidateCache cache;               // null when none is configured
    private DrainReleases drains;               // null unless rollcall.drain.exact
    private Subset subset;                      // null unless rollcall.subset.size
    private SerialContext.Timer recheck;        // a build the label preference asked for later
    private boolean closed;
    /** What the user's failed calls do to their workers. */
    private final FailedCalls failedCalls;
    /** Holds workers that flap out of new snapshots. */
    private final FlapDamping damping;

    /**
     * @param publishIntervalNanos the least time between two snapshot builds (1 / {@code rollcall.publish.max-rate};
     *                  0: none, for tests of other timing rules)
     * @param schemas   schema fetching, or {@code null} for none; its changes must reach
     *                  {@link #schemasChanged()}
     * @param publisher told of each new snapshot, on the serial context
     */
    public FleetTracker(Parts parts, ProbeSettings settings, long publishIntervalNanos, VersionSchemas schemas,
                 SnapshotBuilder builder, Consumer<FleetSnapshot> publisher) {
        this.context = parts.context();
        this.settings = settings;
        this.clock = parts.clock();
        this.schemas = schemas;
        this.builder = builder;
        this.publisher = publisher;
        this.probes = new ProbeScheduler<>(context, parts.transport(), settings, parts.jitter(), this);
        this.pacer = new PublishPacer(context, parts.cpuNanos(), publishIntervalNanos, this::build);
        this.leavers = new Leavers(context, probes);
        this.failedCalls = new FailedCalls(context, probes, pacer,
                () -> tracked.values().stream().filter(TrackedWorker::inUse).count(), this::tracks);
        this.damping = new FlapDamping(context, clock, this::tracks, () -> {
            pacer.changed();
            settle();
        });
    }

    /** The injected machinery a tracker runs on: real in production, virtual in unit tests. */
    public record Parts(SerialContext context, ProbeTransport transport, Clock clock,
                 RandomGenerator jitter, LongSupplier cpuNanos) {
    }

    public ProbeScheduler<TrackedWorker> probes() {
        return probes;
    }

    /** Applies the latest full candidate set from discovery: forgets what left, probes what is new. */
    void applyCandidates(Set<WorkerEndpoint> latest) {
        if (closed) {
            return;
        }
        applySet(latest);
        if (staleSince != null) {
            log.info("discovery recovered; candidates are current again");
            staleSince = null;
            discoveryProblem = null;
            pacer.changed();
        }
        if (cacheProblem != null) {
            cacheProblem = null; // discovery's set is what counts now
            pacer.changed();
        }
        discoveryAnswered = true;
        candidatesKnown = true;
        if (cache != null) {
            cache.offer(latest);
        }
        settle(true);
        closeLeaving();
    }

    private void applySet(Set<WorkerEndpoint> latest) {
        // With subsets, newcomers are probed once the ranks say which may keep a channel (below).
        List<TrackedWorker> joined = subset == null ? null : new ArrayList<>();
        List<TrackedWorker> left = reader.read(latest, (e, set) -> listed(e, set, joined));
        if (!left.isEmpty()) {
            for (TrackedWorker t : left) {
                untrack(t);
                log.info("worker {} left discovery", t.url());
                if (drains != null && probes.kept(t)) { // past the cap no stream held it: nothing to release
                    drains.left(t.url(), t.info() == null ? null : t.info().instanceId());
                }
            }
            leavers.left(left);
        }
        if (joined != null) {
            rerank(); // the eligible newcomers are asked for first: their probes keep their channels
            joined.forEach(probes::request);
        }
        if (builder.last().number() == 0) {
            pacer.changed();
        }
    }

    /**
     * {@code e} is a candidate in set number {@code set}: tracked and probed if new (or added to
     * {@code joined}, with subsets, to be probed once ranked), relabelled if it was tracked.
     */
    private void listed(WorkerEndpoint e, long set, List<TrackedWorker> joined) {
        TrackedWorker t = tracked.get(e.url());
        if (t == null) {
            t = new TrackedWorker(e);
            t.seenIn(set);
            add(t);
            pacer.changed();
            if (joined == null) {
                probes.request(t); // in the set's order
            } else {
                joined.add(t);
            }
            return;
        }
        if (t.seenInSet() == set && !t.endpoint().labels().equals(e.labels())) {
            log.warn("discovery reported {} twice with different labels ({} and {}); using the latter",
                    e.url(), PeerText.escape(t.endpoint().labels().toString()),
                    PeerText.escape(e.labels().toString()));
        }
        t.seenIn(set);
        boolean wasInUse = t.inUse();
        TrackedWorker.State was = t.state();
        if (t.relabel(e)) {
            if (damping.observe(t) || wasInUse && !t.inUse()) {
                pacer.changedUrgently(); // a new instance, or labelled draining by discovery
            } else {
                pacer.changed();
            }
            if (was == TrackedWorker.State.ANSWERED && t.state() == TrackedWorker.State.RECONNECTING) {
                probes.request(t); // a new instance id: probe the new process now
            }
            probes.relabelled(t); // a protocol that answers with discovery's labels answers anew
        }
    }

    /** Closes the connections of the workers that left, once that costs the newcomers nothing (see {@link Leavers}). */
    private void closeLeaving() {
        leavers.closeSoon();
    }

    private void add(TrackedWorker t) {
        tracked.add(t);
        changes.joined(t);
    }

    /**
     * Keeps {@code cache} up to date with discovery's sets and, if discovery has not answered within
     * {@code maxWait}, starts from the set in it: every snapshot is then stale since the file was
     * written, and the file is never used again once discovery has answered.
     */
    public void useCache(CandidateCache cache, Duration maxWait) {
        this.cache = cache;
        context.schedule(() -> {
            if (closed || discoveryAnswered) {
                return;
            }
            CandidateCache.Start start = cache.load(clock.instant());
            if (start.loaded().isEmpty()) {
                // The snapshot says why, as the WARN did: a reader of a snapshot without candidates asks.
                cacheProblem = "candidate cache " + cache.file() + " not used: " + PeerText.escape(start.problem(), 300);
                pacer.changed();
                settle();
                return;
            }
            CandidateCache.Loaded loaded = start.loaded().get();
            log.warn("discovery has not answered within {}; starting from the {} last-known-good candidates in {}, "
                    + "written {}", maxWait, loaded.candidates().size(), cache.file(), loaded.writtenAt());
            applySet(loaded.candidates());
            staleSince = loaded.writtenAt();
            discoveryProblem = "discovery has not answered since start-up; serving the last-known-good candidates"
                    + " of " + cache.file() + ", written " + loaded.writtenAt();
            candidatesKnown = true;
            pacer.changed();
            settle();
            closeLeaving();
        }, maxWait.toNanos());
    }

    /** Tells {@code drains} of every answer and every leaver, and keeps leavers open while it holds them. */
    public void useDrains(DrainReleases drains) {
        this.drains = drains;
        leavers.holdWhile(t -> drains.holdsLeaver(t.url()));
        drains.onLeaverFree(leavers::closeFreed);
    }

    /**
     * Subsets ({@code rollcall.subset.*}): the builder shows only {@code subset}'s members as
     * compatible, and only the workers it ranks eligible keep a probe channel. Before the first set.
     */
    public void useSubset(Subset subset) {
        this.subset = subset;
        builder.useSubset(subset);
        probes.keepOnlyEligible();
    }

    /** Ranks the tracked workers again and demotes or promotes their kept channels to match. */
    private void rerank() {
        subset.rank(tracked.values());
        probes.keepOnly(tracked.values(), subset::keptEligible);
    }

    /** Whether candidates are known, from discovery or from the cache file. */
    public boolean candidatesKnown() {
        return candidatesKnown;
    }

    /** Whether discovery has delivered a candidate set since start-up. */
    boolean discoveryAnswered() {
        return discoveryAnswered;
    }

    /** Discovery failed: keep the last good set and mark it stale. */
    void discoveryFailed(Throwable cause) {
        if (closed) {
            return;
        }
        if (staleSince == null) {
            staleSince = clock.instant();
            String why = DiscoveryFailure.describe(cause);
            if (discoveryAnswered) {
                discoveryProblem = "discovery failing since " + staleSince + ": " + why;
                log.warn("discovery failed; keeping the last {} candidates until it recovers: {}", tracked.size(), why);
            } else {
                discoveryProblem = "discovery has not answered since start-up: " + why;
                log.warn("discovery has not answered since start-up: {}", why);
            }
            pacer.changed();
        } else {
            log.debug("discovery still failing", cause);
        }
        settle();
    }

    /** A schema arrived, failed or is due for a retry. */
    public void schemasChanged() {
        if (!closed) {
            changes.everything(); // a version's workers may be waiting for its schema no more
            pacer.changed();
            settle();
        }
    }

    /** {@code t} is no candidate any more; its probes and connection are left to {@link #closeLeaving}. */
    private void untrack(TrackedWorker t) {
        if (t.inUse()) {
            pacer.changedUrgently();
        } else {
            pacer.changed();
        }
        tracked.remove(t);
        failedCalls.settled(t);
        damping.forget(t);
        changes.left(t);
    }

    /**
     * Probes the worker at {@code url} with a probe that starts now and completes {@code result}
     * with whether that probe's answer is the instance the last snapshot lists as compatible: what
     * a connection made before now reached is then a verified worker (the gRPC name resolver's
     * gate). Any doubt (unknown URL, failure, another instance, not yet published) is {@code false}.
     */
    public void verify(String url, CompletableFuture<Boolean> result) {
        TrackedWorker t = closed ? null : tracked.get(url);
        if (t == null) {
            result.complete(false);
            return;
        }
        probes.requestFresh(t, outcome -> {
            boolean ok = false;
            if (outcome instanceof ProbeOutcome.Answered a && tracks(t) && t.inUse()) {
                ok = builder.last().status(url)
                        .filter(st -> st.state() == WorkerStatus.State.COMPATIBLE)
                        .flatMap(WorkerStatus::info)
                        .map(i -> i.instanceId().equals(a.info().instanceId()))
                        .orElse(false);
            }
            result.complete(ok);
        });
    }

    /** A user's call to the worker at {@code url} failed as if it were gone (see {@link FailedCalls#failed}). */
    public void callFailed(String url, String unescaped) {
        String why = PeerText.escape(unescaped); // a failed call's status message is the worker's text
        TrackedWorker t = closed ? null : tracked.get(url);
        if (t != null && t.inUse() && failedCalls.failed(t, why)) {
            damping.observe(t);
            settle();
        }
    }

    /** A user's call to the worker at {@code url} ran out of its deadline (see {@link FailedCalls#timedOut}). */
    public void callTimedOut(String url, String why) {
        TrackedWorker t = closed ? null : tracked.get(url);
        if (t != null && t.inUse() && failedCalls.timedOut(t, why)) {
            settle();
        }
    }

    /** The channel of the candidate at {@code url} for the user's calls (see {@link ProbeScheduler#share}); null if none. */
    public ManagedChannel share(String url) {
        TrackedWorker t = closed ? null : tracked.get(url);
        return t == null ? null : probes.share(t);
    }

    @Override
    public boolean tracks(TrackedWorker worker) {
        return !closed && tracked.get(worker.url()) == worker;
    }

    @Override
    public void probed(TrackedWorker t, ProbeOutcome outcome) {
        failedCalls.settled(t);
        boolean urgent;
        if (outcome instanceof ProbeOutcome.Answered a) {
            TrackedWorker.State was = t.state();
            ServingState serving = t.serving();
            WorkerInfo info = t.info();
            OptionalInt holders = t.holders();
            urgent = t.answered(a.info(), a.state(), a.revision(), a.holders(), context.nanoTime());
            if (drains != null && probes.kept(t)) { // past the kept-channel cap: it keeps drain-quiet for us
                drains.answered(t.url(), t.info().instanceId(), t.said());
            }
            if (!urgent && was == t.state() && serving == t.serving() && Objects.equals(info, t.info())
                    && holders.equals(t.holders())) {
                // The same answer again (a refresh, a stream's first push): nothing for a reader to see,
                // and no build. Right after converging on 10,000 workers each stream's first answer
                // used to cost a full (no-change) build on this thread.
                return;
            }
        } else {
            urgent = t.failed(((ProbeOutcome.Failed) outcome).reason(), context.nanoTime(), stableNanos());
        }
        if (damping.observe(t)) {
            urgent = true;
        }
        if (urgent) {
            pacer.changedUrgently();
        } else {
            pacer.changed();
        }
    }

    @Override
    public void connectionLost(TrackedWorker t, String why) {
        t.connectionLost(why);
        damping.observe(t);
        pacer.changedUrgently();
    }

    @Override
    public void settle() {
        settle(false);
    }

    /**
     * Asks for the build of what changed. {@code candidateSet}: a set from discovery was just applied; its
     * build is never spaced out behind the probes it started. Applying a set costs time in proportion to
     * the set already, so building it at once at most doubles that (the spacing is for probe answers, each
     * of which costs next to nothing to apply), and a new candidate is listed within one build of
     * discovery's news instead of up to 40 ms later.
     */
    private void settle(boolean candidateSet) {
        if (probes.overKeptCap() != builder.last().counts().overKeptCap()) {
            pacer.changed(); // a worker went past the kept-channel cap, was promoted, or left
        }
        boolean busy = probes.busy();
        pacer.requestBuild(busy && !candidateSet);
        if (!busy) {
            closeLeaving(); // no-op unless workers that left wait for the probes to be done
        }
    }

    /**
     * How long a worker must keep answering to count as up again, so that its next failure starts the
     * backoff over: ten initial retry delays (2.5 s by default), or backoff.max if that is shorter.
     */
    private long stableNanos() {
        return Math.min(settings.backoffMax().toNanos(), settings.backoffInitial().toNanos() * 10);
    }

    /** Discovery's problem and the cache file's, as the snapshot tells them; null when neither has one. */
    private String problem() {
        if (cacheProblem == null) {
            return discoveryProblem;
        }
        return discoveryProblem == null ? cacheProblem : discoveryProblem + "; " + cacheProblem;
    }

    private void build() {
        if (closed) {
            return;
        }
        changes.forgetJoinedIf(t -> closed || tracked.get(t.url()) != t); // joined and left again since the last build
        builder.overKeptCap(probes.overKeptCap());
        FleetSnapshot next = builder.build(changes, tracked::ordered, staleSince, problem(),
                t -> schemas.ready(t.info().version(), t.endpoint(), () -> channelOf(t.url())));
        if (subset != null) {
            // The build ranked them by what it showed; a member that went hands its channel on.
            probes.keepOnly(tracked.values(), subset::keptEligible);
        }
        if (next != null) {
            publisher.accept(next);
        }
        long later = builder.recheckInNanos();
        if (later > 0 && (recheck == null || !recheck.pending())) {
            recheck = context.schedule(() -> {
                pacer.changed();
                settle();
            }, later);
        }
    }

    /** The open channel of the worker at {@code url}, if it is tracked and has one (schema fetches, releases). */
    public ManagedChannel channelOf(String url) {
        TrackedWorker t = tracked.get(url);
        return t == null ? null : probes.channel(t);
    }

    /** How many candidate sets were compared with every tracked worker (see {@link SetReader}): for tests. */
    long wholeSetsRead() {
        return reader.wholeSetsRead();
    }

    /** For tests that compare trackers fed different histories: damps no worker (see {@link FlapDamping}). */
    void withoutFlapDamping() {
        damping.off();
    }

    /** For tests: reads every candidate set whole, the reference the cheaper ways must end at. */
    void readEverySetWhole() {
        reader.readEverySetWhole();
    }

    /** The candidates as tracked now, in URL order: for tests and diagnostics. */
    List<TrackedWorker> workers() {
        return tracked.ordered();
    }

    /** Stops everything; returns the channels it shut down, so that the caller can wait for them. */
    public List<ManagedChannel> close() {
        closed = true;
        pacer.close();
        if (drains != null) {
            drains.close();
        }
        if (recheck != null) {
            recheck.cancel();
        }
        List<TrackedWorker> all = new ArrayList<>(tracked.values());
        all.addAll(leavers.close()); // left, and their connections not closed yet
        List<ManagedChannel> channels = probes.close(all);
        tracked.clear();
        if (schemas != null) {
            channels.addAll(schemas.close());
        }
        return channels;
    }
}
