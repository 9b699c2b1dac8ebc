package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.internal.drain.ExactDrain;
import dev.rollcall.core.internal.probe.ProbeScheduler;
import dev.rollcall.core.internal.probe.ProbeTransport;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.settings.ProbeSettings;
import dev.rollcall.core.internal.snapshot.Changes;
import dev.rollcall.core.internal.snapshot.PublishPacer;
import dev.rollcall.core.internal.snapshot.SnapshotBuilder;
import dev.rollcall.core.internal.snapshot.SnapshotFanOut;
import dev.rollcall.core.internal.snapshot.Subset;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.ManagedChannel;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the resolver knows about the fleet, and the only code that changes it: applies
 * discovery's candidate sets and failures and the probes' outcomes to the {@link TrackedWorker}s,
 * and says what changed to the {@link PublishPacer}. Probing is {@link ProbeScheduler}'s job,
 * building snapshots {@link SnapshotBuilder}'s; each snapshot built goes to the one owner of the
 * current snapshot, the {@link SnapshotFanOut}. Gets every part at construction: a feature that is
 * off is a part that does nothing ({@link TrackerFeatures#NONE}).
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
    private final TrackerFeatures.SchemaGate schemas;
    /** The one owner of the current snapshot: every snapshot built is published there. */
    private final SnapshotFanOut owner;
    /** The candidates tracked now, by URL. */
    private final TrackedWorkers tracked = new TrackedWorkers();
    /** Who joined, left or changed since the last build: what the next build reads. */
    private final Changes changes = new Changes();
    /** Workers that left discovery whose connections are still open. */
    private final Leavers leavers;
    /** Reads discovery's sets against the tracked workers: as changes, against the set before, or whole. */
    private final SetReader reader = new SetReader(tracked);
    /** Since when the candidates are stale and why, as the snapshots say. */
    private final DiscoveryHealth health = new DiscoveryHealth();
    private boolean discoveryAnswered;
    private boolean candidatesKnown;            // from discovery, or from the cache file
    private final Optional<CandidateCache> cache;
    private final Duration cacheMaxWait;
    private final ExactDrain drains;
    private final Optional<Subset> subset;
    private SerialContext.Timer recheck;        // a build the label preference asked for later
    private boolean closed;
    /** What the user's failed calls do to their workers. */
    private final FailedCalls failedCalls;
    /** Holds workers that flap out of new snapshots. */
    private final FlapDamping damping;
    private final UserCalls calls;

    /**
     * @param publishIntervalNanos the least time between two snapshot builds (1 / {@code rollcall.publish.max-rate};
     *                  0: none, for tests of other timing rules)
     * @param owner     where each snapshot built is published, on the serial context
     */
    public FleetTracker(Parts parts, ProbeSettings settings, long publishIntervalNanos, TrackerFeatures features,
                 SnapshotBuilder builder, SnapshotFanOut owner) {
        this.context = parts.context();
        this.settings = settings;
        this.clock = parts.clock();
        this.schemas = features.schemas();
        this.builder = builder;
        this.owner = owner;
        this.cache = features.cache();
        this.cacheMaxWait = features.cacheMaxWait();
        this.subset = features.subset();
        this.probes = new ProbeScheduler<>(context, parts.transport(), settings, parts.jitter(), this);
        this.pacer = new PublishPacer(context, parts.cpuNanos(), publishIntervalNanos, this::build);
        this.leavers = new Leavers(context, probes);
        this.failedCalls = new FailedCalls(context, probes, pacer,
                () -> tracked.values().stream().filter(TrackedWorker::inUse).count(), this::tracks);
        this.damping = new FlapDamping(context, clock, this::tracks, () -> {
            pacer.changed();
            settle();
        });
        this.calls = new UserCalls(this, probes, failedCalls, damping);
        // Exact drain releases over the kept channel this tracker finds by URL, and holds leavers open.
        this.drains = features.drains().make(this::channelOf);
        leavers.holdWhile(t -> drains.holdsLeaver(t.url()));
        drains.onLeaverFree(leavers::closeFreed);
        // Subsets: the builder shows only the members as compatible; only the eligible keep a channel.
        subset.ifPresent(s -> {
            builder.useSubset(s);
            probes.keepOnlyEligible();
        });
    }

    /** The injected machinery a tracker runs on: real in production, virtual in unit tests. */
    public record Parts(SerialContext context, ProbeTransport transport, Clock clock,
                 RandomGenerator jitter, LongSupplier cpuNanos) {
    }

    public ProbeScheduler<TrackedWorker> probes() {
        return probes;
    }

    /** Exact drain as this tracker made it ({@link ExactDrain#OFF} when off): the owner of the snapshot tells it of each. */
    public ExactDrain drains() {
        return drains;
    }

    /** Applies the latest full candidate set from discovery: forgets what left, probes what is new. */
    void applyCandidates(Set<WorkerEndpoint> latest) {
        if (closed) {
            return;
        }
        applySet(latest);
        if (health.answered()) {
            pacer.changed();
        }
        discoveryAnswered = true;
        candidatesKnown = true;
        cache.ifPresent(c -> c.offer(latest));
        settle(true);
        leavers.closeSoon(); // once that costs the newcomers nothing (see Leavers)
    }

    private void applySet(Set<WorkerEndpoint> latest) {
        // With subsets, newcomers are probed once the ranks say which may keep a channel (below).
        List<TrackedWorker> joined = subset.isPresent() ? new ArrayList<>() : null;
        List<TrackedWorker> left = reader.read(latest, (e, set) -> listed(e, set, joined));
        if (!left.isEmpty()) {
            for (TrackedWorker t : left) {
                untrack(t);
                log.info("worker {} left discovery", t.url());
                if (probes.kept(t)) { // past the cap no stream held it: nothing to release
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

    private void add(TrackedWorker t) {
        tracked.add(t);
        changes.joined(t);
    }

    /**
     * Starts the tracker's own timer, on the serial context before discovery starts: with a cache
     * file, one that starts from the set in it if discovery has not answered within the cache's max
     * wait (every snapshot is then stale since the file was written, and the file is never used
     * again once discovery has answered). Discovery's sets keep the file up to date.
     */
    public void start() {
        cache.ifPresent(c -> context.schedule(() -> startFromCache(c), cacheMaxWait.toNanos()));
    }

    private void startFromCache(CandidateCache cache) {
        if (closed || discoveryAnswered) {
            return;
        }
        CandidateCache.Start start = cache.load(clock.instant());
        if (start.loaded().isEmpty()) {
            health.cacheNotUsed(cache.file(), start.problem());
            pacer.changed();
            settle();
            return;
        }
        CandidateCache.Loaded loaded = start.loaded().get();
        health.startedFromCache(cache.file(), loaded.writtenAt(), loaded.candidates().size(), cacheMaxWait);
        applySet(loaded.candidates());
        candidatesKnown = true;
        pacer.changed();
        settle();
        leavers.closeSoon(); // once that costs the newcomers nothing (see Leavers)
    }

    /** With subsets: ranks the tracked workers again and demotes or promotes their kept channels to match. */
    private void rerank() {
        subset.ifPresent(s -> {
            s.rank(tracked.values());
            probes.keepOnly(tracked.values(), s::keptEligible);
        });
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
        if (health.failed(cause, clock.instant(), discoveryAnswered, tracked.size())) {
            pacer.changed();
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

    /** {@code t} is no candidate any more; its probes and connection are left to {@link Leavers}. */
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

    /** The worker tracked at {@code url}; null when there is none or the tracker is closed. */
    TrackedWorker find(String url) {
        return closed ? null : tracked.get(url);
    }

    /** The last snapshot built (or the initial one). */
    FleetSnapshot lastBuilt() {
        return builder.last();
    }

    /** What the user's calls tell this tracker's workers and ask of them. */
    public UserCalls calls() {
        return calls;
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
            if (probes.kept(t)) { // past the kept-channel cap: it keeps drain-quiet for us
                drains.answered(t.url(), t.info().instanceId(), t.said());
            }
            if (!urgent && was == t.state() && serving == t.serving() && Objects.equals(info, t.info())
                    && holders.equals(t.holders())) {
                // The same answer again (a refresh, a stream's first push): nothing for a reader to see,
                // so no build: on a large fleet every stream's first push would otherwise cost one.
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
     * discovery's news instead of after the pacer's next interval.
     */
    private void settle(boolean candidateSet) {
        if (probes.overKeptCap() != builder.last().counts().overKeptCap()) {
            pacer.changed(); // a worker went past the kept-channel cap, was promoted, or left
        }
        boolean busy = probes.busy();
        pacer.requestBuild(busy && !candidateSet);
        if (!busy) {
            leavers.closeSoon(); // no-op unless workers that left wait for the probes to be done
        }
    }

    /**
     * How long a worker must keep answering to count as up again, so that its next failure starts the
     * backoff over: ten initial retry delays (2.5 s by default), or backoff.max if that is shorter.
     */
    private long stableNanos() {
        return Math.min(settings.backoffMax().toNanos(), settings.backoffInitial().toNanos() * 10);
    }

    private void build() {
        if (closed) {
            return;
        }
        changes.forgetJoinedIf(t -> closed || tracked.get(t.url()) != t); // joined and left again since the last build
        builder.overKeptCap(probes.overKeptCap());
        FleetSnapshot next = builder.build(changes, tracked::ordered, health.staleSince(), health.problem(),
                t -> schemas.ready(t.info().version(), t.endpoint(), () -> channelOf(t.url())));
        // The build ranked them by what it showed; a member that went hands its channel on.
        subset.ifPresent(s -> probes.keepOnly(tracked.values(), s::keptEligible));
        if (next != null) {
            owner.publish(next, candidatesKnown);
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
        drains.close();
        if (recheck != null) {
            recheck.cancel();
        }
        List<TrackedWorker> all = new ArrayList<>(tracked.values());
        all.addAll(leavers.close()); // left, and their connections not closed yet
        List<ManagedChannel> channels = probes.close(all);
        tracked.clear();
        return channels;
    }
}
