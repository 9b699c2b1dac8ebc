package dev.rollcall.core;

import dev.rollcall.api.Backoff;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.SelectionReport;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.ProbeClient;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the resolver knows about the fleet, and the only code that changes it.
 *
 * <p>Confined to the resolver's serial executor: every method runs there, so the state needs no
 * locks (the pattern of grpc-java's {@code SynchronizationContext}). Network callbacks hop back to
 * it. Each change marks the state dirty and asks for a snapshot; the snapshot is built in a task of
 * its own and, if it differs from the last, published (see {@link #publishIfChanged()}).
 */
final class FleetTracker {

    private static final Logger log = LoggerFactory.getLogger(FleetTracker.class);

    private final ScheduledExecutorService serial;
    private final ProbeClient probes;
    private final VersionPolicy policy;
    private final ResolverOptions options;
    private final Backoff backoff;
    private final Clock clock;
    private final Consumer<FleetSnapshot> publisher;
    /** Whether the policy is a per-worker rule (keeps {@link VersionPolicy}'s own select): see {@link #checkEach}. */
    private final boolean perWorkerPolicy;
    private Map<WorkerInfo, Verdict> checked = new IdentityHashMap<>();

    /** By URL, in URL order: snapshots list workers in that order, and sorting 10,000 for each cost more. */
    private final TreeMap<String, Tracked> tracked = new TreeMap<>();
    private final ArrayDeque<Tracked> queue = new ArrayDeque<>();
    private final AtomicLong probesSent = new AtomicLong();
    private final AtomicLong probesFailed = new AtomicLong();
    private final List<ProbeObserver> observers = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Told of every finished probe, on the gRPC thread that finished it: must be fast and thread-safe. */
    interface ProbeObserver {
        void probed(long latencyNanos, boolean answered);
    }
    private int inFlight;
    private boolean dirty;
    /**
     * A worker readers may be using is going or changed (its connection dropped, it left discovery,
     * a probe of it failed, it restarted in place): such news is published at once, never spaced
     * out, so that no reader keeps sending work to it for longer than a snapshot build.
     */
    private boolean urgent;
    private boolean publishQueued;
    private ScheduledFuture<?> spacedBuild; // a queued build waiting for its spacing, if any
    /** {@link System#nanoTime()} before which no snapshot is built: see {@link #publishIfChanged()}. */
    private long nextPublishNanos;
    private boolean closed;
    private Instant staleSince;
    private FleetSnapshot last;
    /** Schemas per worker version; null when the resolver fetches none. See {@link #useSchemas}. */
    private VersionSchemas schemas;
    private dev.rollcall.api.registry.KeyPaths keyPaths = dev.rollcall.api.registry.KeyPaths.none();
    private Map<String, dev.rollcall.api.registry.ProtoSchema> publishedSchemas = Map.of();

    FleetTracker(ScheduledExecutorService serial, ProbeClient probes, VersionPolicy policy, ResolverOptions options,
                 Clock clock, FleetSnapshot initial, Consumer<FleetSnapshot> publisher) {
        this.serial = serial;
        this.probes = probes;
        this.policy = policy;
        this.options = options;
        this.backoff = Backoff.of(options.backoffInitial(), options.backoffMax());
        this.clock = clock;
        this.last = initial;
        this.publisher = publisher;
        this.perWorkerPolicy = keepsDefaultSelect(policy);
    }

    private static boolean keepsDefaultSelect(VersionPolicy policy) {
        try {
            return policy.getClass().getMethod("select", List.class).getDeclaringClass() == VersionPolicy.class;
        } catch (NoSuchMethodException impossible) {
            return false;
        }
    }

    /** Where a candidate is in its probe life; the policy turns ANSWERED into COMPATIBLE or REJECTED. */
    private enum Phase {
        NEW(State.PENDING), ANSWERED(State.COMPATIBLE), RECONNECTING(State.PENDING), UNREACHABLE(State.UNREACHABLE);

        final State shown;

        Phase(State shown) {
            this.shown = shown;
        }
    }

    /** One candidate endpoint and what is known about it. Confined to the serial executor. */
    private static final class Tracked {
        final String url;
        WorkerEndpoint endpoint;
        WorkerInfo info;              // the last answer; null until the first
        Phase phase = Phase.NEW;
        String reason = "not probed yet";
        int failures;                 // failed probes since it last stayed up (see stableNanos)
        long upSinceNanos;            // the first answer since the last failed probe; 0 when none
        boolean queued;
        boolean probing;
        boolean reprobeWanted;        // asked for while a probe was in flight
        boolean watching;
        ScheduledFuture<?> timer;     // the next retry or refresh
        ManagedChannel channel;
        WorkerStatus shown;           // as the last snapshot showed it; reused while nothing changed
        boolean awaitingSchema;       // answered, its version's schema not fetched yet (set while building)

        Tracked(WorkerEndpoint endpoint) {
            this.url = endpoint.url();
            this.endpoint = endpoint;
        }
    }

    /**
     * Fetch each worker version's schema with {@code versionSchemas} and hold a worker back until its
     * version's schema is known (see {@link VersionSchemas}); snapshots carry the schemas and
     * {@code keys}. Call once, before the first candidates.
     */
    void useSchemas(VersionSchemas versionSchemas, dev.rollcall.api.registry.KeyPaths keys) {
        this.schemas = versionSchemas;
        this.keyPaths = keys;
    }

    /** A schema arrived, failed or is due for a retry. */
    void schemasChanged() {
        if (!closed) {
            dirty = true;
            publishIfChanged();
        }
    }

    /** Whether an answered worker may be published: its version's schema is known (see {@link VersionSchemas#ready}). */
    private boolean schemaReady(Tracked t) {
        return schemas == null || schemas.ready(t.info.version(), t.endpoint, t.channel);
    }

    void addObserver(ProbeObserver observer) {
        observers.add(observer);
    }

    long probesFailed() {
        return probesFailed.get();
    }

    long probesSent() {
        return probesSent.get();
    }

    /** Applies the latest full candidate set: forgets what left, probes what is new. */
    void applyCandidates(Set<WorkerEndpoint> latest) {
        if (closed) {
            return;
        }
        Map<String, WorkerEndpoint> byUrl = new LinkedHashMap<>();
        for (WorkerEndpoint e : latest) {
            WorkerEndpoint previous = byUrl.put(e.url(), e);
            if (previous != null && !previous.labels().equals(e.labels())) {
                log.warn("discovery reported {} twice with different labels ({} and {}); using the latter",
                        e.url(), previous.labels(), e.labels());
            }
        }
        for (Tracked t : new ArrayList<>(tracked.values())) {
            if (!byUrl.containsKey(t.url)) {
                forget(t);
                log.info("worker {} left discovery", t.url);
            }
        }
        for (WorkerEndpoint e : byUrl.values()) {
            Tracked t = tracked.get(e.url());
            if (t == null) {
                t = new Tracked(e);
                tracked.put(t.url, t);
                dirty = true;
                requestProbe(t);
            } else if (!t.endpoint.labels().equals(e.labels())) {
                t.endpoint = e;
                if (t.info != null) {
                    t.info = withEndpoint(t.info, e);
                }
                dirty = true;
            }
        }
        if (last.number() == 0) {
            dirty = true;
        }
        if (staleSince != null) {
            log.info("discovery recovered; candidates are current again");
            staleSince = null;
            dirty = true;
        }
        publishIfChanged();
    }

    /** Discovery failed: keep the last good set and mark it stale. */
    void discoveryFailed(Throwable cause) {
        if (closed) {
            return;
        }
        if (staleSince == null) {
            staleSince = clock.instant();
            dirty = true;
            log.warn("discovery failed; keeping the last {} candidates until it recovers: {}", tracked.size(),
                    String.valueOf(cause));
        } else {
            log.debug("discovery still failing", cause);
        }
        publishIfChanged();
    }

    private void forget(Tracked t) {
        urgent |= t.phase == Phase.ANSWERED;
        tracked.remove(t.url);
        cancelTimer(t);
        closeChannel(t);
        dirty = true;
    }

    private void requestProbe(Tracked t) {
        if (t.probing) {
            t.reprobeWanted = true;
            return;
        }
        if (t.queued) {
            return;
        }
        cancelTimer(t);
        t.queued = true;
        queue.add(t);
        pump();
    }

    private void pump() {
        while (inFlight < options.probeConcurrency() && !queue.isEmpty()) {
            Tracked t = queue.poll();
            t.queued = false;
            if (tracked.get(t.url) == t) {
                startProbe(t);
            }
        }
    }

    private void startProbe(Tracked t) {
        if (t.channel == null) {
            t.channel = probes.open(t.endpoint);
        } else {
            // Our backoff decides when to retry; gRPC's own reconnect backoff (1 s and up) must not add to it.
            t.channel.resetConnectBackoff();
        }
        ManagedChannel channel = t.channel;
        t.probing = true;
        inFlight++;
        probesSent.incrementAndGet();
        long started = System.nanoTime();
        probes.probe(channel, t.endpoint, options.probeTimeout())
                .whenComplete((info, failure) -> {
                    if (failure != null) {
                        probesFailed.incrementAndGet();
                    }
                    if (!observers.isEmpty()) {
                        long nanos = System.nanoTime() - started;
                        observers.forEach(o -> o.probed(nanos, failure == null));
                    }
                    execute(() -> probeDone(t, channel, info, failure));
                });
    }

    private void probeDone(Tracked t, ManagedChannel channel, WorkerInfo info, Throwable failure) {
        inFlight--;
        t.probing = false;
        if (closed) {
            return;
        }
        if (tracked.get(t.url) != t) {
            pump();
            return; // left while we were probing; its channel is already closed
        }
        if (failure != null) {
            urgent |= t.phase == Phase.ANSWERED; // a worker readers may be using stopped answering
            // Flap damping: only a worker that stayed up a while starts its backoff over; one that
            // answers and drops again at once keeps backing off further each time.
            if (t.upSinceNanos != 0 && System.nanoTime() - t.upSinceNanos >= stableNanos()) {
                t.failures = 0;
            }
            t.upSinceNanos = 0;
            t.failures++;
            String reason = ProbeClient.describe(failure, options.probeTimeout());
            if (t.phase != Phase.UNREACHABLE || !reason.equals(t.reason)) {
                log.info("worker {} is unreachable: {}; retrying with backoff", t.url, reason);
            }
            t.phase = Phase.UNREACHABLE;
            t.reason = reason;
            t.info = null;
            // A failed probe's channel is never reused, kept channels or not: a connection that
            // timed out can stay wedged (e.g. accepted by the kernel but never by the server), and
            // every retry over it would time out too, long after the worker answers a new one.
            closeChannel(t);
            schedule(t, backoff.delayNanos(t.failures));
        } else {
            WorkerInfo answered = withEndpoint(info, t.endpoint);
            // A refresh that finds the same answer is not news; a changed one (a restart in place,
            // another version) is, at once. Refreshes of 10,000 workers come ~17 a second.
            urgent |= t.info != null && !t.info.equals(answered);
            if (t.info != null && !t.info.instanceId().equals(answered.instanceId())) {
                log.info("worker {} restarted in place: instance {} -> {}, version '{}' -> '{}'", t.url,
                        t.info.instanceId(), answered.instanceId(), t.info.version(), answered.version());
            }
            t.info = answered;
            if (t.upSinceNanos == 0) {
                t.upSinceNanos = System.nanoTime();
            }
            t.phase = Phase.ANSWERED;
            t.reason = "";
            if (options.keepChannels()) {
                watchConnection(t, channel);
            } else {
                closeChannel(t);
            }
            long refresh = options.refreshInterval().toNanos();
            schedule(t, refresh - (long) (refresh * 0.1 * ThreadLocalRandom.current().nextDouble()));
        }
        dirty = true;
        if (t.reprobeWanted) {
            t.reprobeWanted = false;
            requestProbe(t);
        }
        pump();
        publishIfChanged();
    }

    /**
     * How long a worker must keep answering to count as up again, so that its next failure starts the
     * backoff over: ten initial retry delays (2.5 s by default), or backoff.max if that is shorter.
     */
    private long stableNanos() {
        return Math.min(options.backoffMax().toNanos(), options.backoffInitial().toNanos() * 10);
    }

    /** A kept channel that leaves READY means the worker may have restarted: probe it again. */
    private void watchConnection(Tracked t, ManagedChannel channel) {
        if (t.watching) {
            return;
        }
        ConnectivityState seen = channel.getState(false);
        if (seen != ConnectivityState.READY) {
            connectionLost(t); // dropped between the answer and now
            return;
        }
        t.watching = true;
        channel.notifyWhenStateChanged(seen, () -> execute(() -> {
            t.watching = false;
            if (closed || tracked.get(t.url) != t || t.channel != channel || channel.isShutdown()) {
                return;
            }
            ConnectivityState now = channel.getState(false);
            if (t.phase != Phase.ANSWERED) {
                return; // already being probed again; a successful probe watches anew
            }
            if (channel.getState(false) != ConnectivityState.READY) {
                connectionLost(t);
                publishIfChanged();
            } else {
                watchConnection(t, channel);
            }
        }));
    }

    private void connectionLost(Tracked t) {
        log.info("worker {} dropped its connection; excluding it until it answers again", t.url);
        t.phase = Phase.RECONNECTING;
        t.reason = "connection lost; probing again";
        dirty = true;
        urgent = true;
        requestProbe(t);
    }

    private void schedule(Tracked t, long delayNanos) {
        cancelTimer(t);
        t.timer = serial.schedule(() -> {
            t.timer = null;
            if (!closed && tracked.get(t.url) == t) {
                requestProbe(t);
                publishIfChanged();
            }
        }, delayNanos, TimeUnit.NANOSECONDS);
    }

    private static void cancelTimer(Tracked t) {
        if (t.timer != null) {
            t.timer.cancel(false);
            t.timer = null;
        }
    }

    private static void closeChannel(Tracked t) {
        if (t.channel != null) {
            t.channel.shutdownNow();
            t.channel = null;
            t.watching = false;
        }
    }

    private static WorkerInfo withEndpoint(WorkerInfo info, WorkerEndpoint endpoint) {
        return info.endpoint().equals(endpoint) ? info
                : new WorkerInfo(endpoint, info.version(), info.instanceId(), info.labels(), info.services());
    }

    /** Runs {@code task} on the serial executor unless it has stopped (then the task no longer matters). */
    private void execute(Runnable task) {
        try {
            serial.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException afterClose) {
            log.trace("resolver closed; dropping a late callback");
        }
    }

    /**
     * Asks for a snapshot of the current state, published if anything a reader sees changed. It is
     * built in a task of its own, queued behind the work already waiting on the serial executor, so
     * that a burst of probe answers makes one snapshot rather than one each: a snapshot costs time
     * in proportion to the fleet, and one per answer made converging on 10,000 workers quadratic
     * (minutes instead of seconds). While answers keep coming, building is also spaced out to about
     * a ninth of this thread's time: no sooner than {@value #BUILD_SPACING} times the typical CPU
     * time of a build (smoothed over the last few) after the last one, and never more than 40 ms
     * later (for small fleets microseconds, at 10,000 workers a few tens of milliseconds). Once
     * nothing is in flight or queued, and whenever a worker readers may be using is going or
     * changed, the change is published at once.
     */
    void publishIfChanged() {
        if (!dirty || closed) {
            return;
        }
        // Spacing only matters while answers keep coming: once nothing is in flight or queued, or
        // when a worker in use is going, the change is published at once (a build already spaced
        // out is brought forward).
        boolean quiet = urgent || inFlight == 0 && queue.isEmpty();
        if (publishQueued && !(quiet && spacedBuild != null)) {
            return;
        }
        if (spacedBuild != null) {
            spacedBuild.cancel(false);
            spacedBuild = null;
        }
        publishQueued = true;
        Runnable build = () -> {
            publishQueued = false;
            spacedBuild = null;
            publishNow();
        };
        long wait = quiet ? 0 : nextPublishNanos - System.nanoTime();
        try {
            if (wait > 0) {
                spacedBuild = serial.schedule(build, wait, TimeUnit.NANOSECONDS);
            } else {
                serial.execute(build);
            }
        } catch (java.util.concurrent.RejectedExecutionException afterClose) {
            publishQueued = false;
        }
    }

    private static final int BUILD_SPACING = 8;
    /** No change waits longer than this for the spacing, however slow the last build was. */
    private static final long MAX_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(40);
    /** A smoothed build cost: one slow build (a cold JIT, a page fault storm) must not hold changes back. */
    private long typicalBuildCpuNanos;

    /** Builds the snapshot of the current state and publishes it if anything a reader sees changed. */
    private void publishNow() {
        if (!dirty || closed) {
            return;
        }
        // CPU time, not wall time: a GC pause or a busy machine must not space builds out further.
        long started = THREADS.getCurrentThreadCpuTime();
        try {
            buildAndPublish();
        } finally {
            long cpu = THREADS.getCurrentThreadCpuTime() - started;
            typicalBuildCpuNanos = typicalBuildCpuNanos == 0 ? cpu : (3 * typicalBuildCpuNanos + cpu) / 4;
            nextPublishNanos = System.nanoTime() + Math.min(MAX_SPACING_NANOS, typicalBuildCpuNanos * BUILD_SPACING);
        }
    }

    private static final java.lang.management.ThreadMXBean THREADS =
            java.lang.management.ManagementFactory.getThreadMXBean();

    private void buildAndPublish() {
        dirty = false;
        urgent = false;
        Collection<Tracked> sorted = tracked.values();
        List<WorkerInfo> answered = new ArrayList<>();
        java.util.Set<String> versions = new java.util.HashSet<>();
        for (Tracked t : sorted) {
            if (schemas != null && t.info != null) {
                versions.add(t.info.version());
            }
            if (t.phase == Phase.ANSWERED) {
                t.awaitingSchema = !schemaReady(t);
                if (!t.awaitingSchema) {
                    answered.add(t.info);
                }
            }
        }
        if (schemas != null) {
            schemas.retain(versions);
        }
        Map<String, dev.rollcall.api.registry.ProtoSchema> schemasNow = schemas == null ? Map.of() : schemas.known();
        Chosen chosen = select(answered);
        Map<String, String> verdicts = chosen.verdicts();
        List<WorkerStatus> statuses = new ArrayList<>(sorted.size());
        for (Tracked t : sorted) {
            State state = t.phase.shown;
            String reason = t.reason;
            if (t.phase == Phase.ANSWERED && t.awaitingSchema) {
                state = State.PENDING;
                reason = "fetching the schema of version '" + t.info.version() + "'";
            } else if (t.phase == Phase.ANSWERED) {
                reason = verdicts.getOrDefault(t.url, "the policy made no decision about it");
                state = reason.isEmpty() ? State.COMPATIBLE : State.REJECTED;
            }
            WorkerStatus shown = t.shown;
            if (shown == null || shown.state() != state || !shown.reason().equals(reason)
                    || shown.endpoint() != t.endpoint || shown.info().orElse(null) != t.info) {
                shown = new WorkerStatus(t.endpoint, state, reason, Optional.ofNullable(t.info));
                t.shown = shown;
            }
            statuses.add(shown);
        }
        // Snapshot 0 means "nothing known yet": the first set from discovery is news even when empty.
        SelectionReport before = last.selection();
        if (last.number() > 0 && statuses.equals(last.statuses()) && schemasNow == publishedSchemas
                && Objects.equals(staleSince, last.staleSince().orElse(null))
                && chosen.cohort().equals(before.cohort()) && chosen.explanation().equals(before.explanation())) {
            return;
        }
        logVerdictChanges(statuses);
        publishedSchemas = schemasNow;
        last = FleetSnapshot.of(last.number() + 1, clock.instant(), staleSince, policy.description(), statuses,
                chosen.cohort(), chosen.explanation(), schemasNow, keyPaths);
        // Once per change of choice at INFO; the explanation's counts move with every probe answer.
        if (!chosen.cohort().equals(before.cohort())) {
            log.info("snapshot {}: {}", last.number(), last.selection().summary());
        } else if (!chosen.explanation().equals(before.explanation()) && log.isDebugEnabled()) {
            log.debug("snapshot {}: {}", last.number(), last.selection().summary());
        }
        publisher.accept(last);
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

    private static final Verdict NO_VERDICT = Verdict.reject("policy returned no verdict");

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
                log.info("worker {} is compatible (version {})", s.endpoint().url(), version);
            } else if (s.state() == State.REJECTED) {
                log.info("worker {} is rejected (version {}): {}", s.endpoint().url(), version, s.reason());
            }
        }
    }

    /** Stops every timer and closes every channel. Runs on the serial executor. */
    /** Stops everything; returns the channels it shut down, so that the caller can wait for them. */
    List<ManagedChannel> close() {
        closed = true;
        List<ManagedChannel> channels = new ArrayList<>();
        for (Tracked t : tracked.values()) {
            cancelTimer(t);
            if (t.channel != null) {
                channels.add(t.channel);
            }
            closeChannel(t);
        }
        tracked.clear();
        queue.clear();
        if (schemas != null) {
            channels.addAll(schemas.close());
        }
        return channels;
    }

}
