package dev.rollcall.core;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Scheduler;
import dev.rollcall.api.Ticker;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.InvocationTargets;
import dev.rollcall.api.registry.KeyExtractors;
import dev.rollcall.api.registry.KeyRouting;
import dev.rollcall.api.registry.ProtoSymbols;
import dev.rollcall.api.registry.WorkerEndpoints;
import dev.rollcall.api.registry.WorkerServices;
import dev.rollcall.api.registry.WorkerVersions;
import dev.rollcall.core.internal.lifecycle.ResolverLifecycle;
import dev.rollcall.core.internal.probe.ProbeScheduler;
import dev.rollcall.core.internal.settings.Plugins;
import dev.rollcall.core.internal.settings.ResolverSettings;
import dev.rollcall.core.internal.snapshot.SnapshotFanOut;
import dev.rollcall.core.internal.snapshot.Subscription;
import dev.rollcall.protocol.spi.ProbeCapabilities;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * Keeps the set of workers a coordinator may use: it takes candidate endpoints from a discovery
 * backend, probes each new one once over gRPC ({@code rollcall.v1.WorkerService/WorkerInfo}), and
 * publishes the workers its {@link VersionPolicy} accepts as immutable, numbered
 * {@link FleetSnapshot}s.
 *
 * <pre>{@code
 * try (WorkerResolver resolver = WorkerResolver.fromConfig()) {   // rollcall.properties & co
 *     resolver.awaitWorkers(1, Duration.ofSeconds(10));
 *     FleetSnapshot snapshot = resolver.pin();                    // one view for the whole query
 *     plan(snapshot.workers());
 * }
 * }</pre>
 *
 * <h2>Guarantees</h2>
 * <ul>
 *   <li>Only workers that answered a probe and that the policy accepts are returned; a probe
 *       failure leaves the worker out (fail closed) and is retried with exponential backoff and
 *       jitter.</li>
 *   <li>A new URL is probed once, with at most one probe in flight per URL, at most
 *       {@code probe.concurrency} in all, each with the {@code probe.timeout} deadline. It is probed
 *       again only if it may have changed: its connection dropped (a restart in place), or the
 *       {@code probe.refresh-interval} ran out.</li>
 *   <li>A URL that leaves discovery is gone from the next snapshot.</li>
 *   <li>With kept channels (the default), a worker whose host goes silent (no FIN, no RST) is out of
 *       new snapshots within {@code probe.keepalive-time} + {@code probe.keepalive-timeout} + 1 s
 *       (9 s by default) when it grants stream heartbeats, within {@code max(10 s, keepalive-time)
 *       + keepalive-timeout} (13 s) when it does not, within {@code keepalive-time + keepalive-timeout}
 *       (8 s) with another {@code probe.protocol} that connects, and unreachable, with that reason,
 *       until a probe over a new connection answers (see {@link Builder#keepalive}).</li>
 *   <li>Of two answers of one worker process, the one with the lower revision is never applied
 *       after the higher: pushes do not go back in time.</li>
 *   <li>When discovery fails, the last good set is kept and snapshots say since when it is
 *       stale.</li>
 * </ul>
 *
 * <h2>Threads</h2>
 * All state changes happen on one thread, {@code rollcall-resolver-<name>}; probes run on
 * {@code rollcall-probe-<name>} event-loop threads; each listener on a thread of its own,
 * {@code rollcall-listeners-<name>-N}, and the {@code rollcall:} gRPC targets' name resolvers on
 * {@code rollcall-followers-<name>}.
 * Timing (retries, refreshes, publish spacing, await deadlines) follows the {@link Ticker} and
 * {@link Scheduler} of {@link Builder#ticker} and {@link Builder#scheduler}, real time by default.
 * Reads ({@link #workers()}, {@link #pin()}) are one volatile read, never block, and may be called
 * from any thread. {@link #close()} stops every thread and connection the resolver started, and
 * closes the discovery backend.
 */
public final class WorkerResolver implements AutoCloseable {

    private static final AtomicInteger RESOLVERS = new AtomicInteger();

    private final String name;
    private final WorkerDiscovery discovery;
    private final VersionPolicy policy;
    /** The rooms behind the facade, built, started and closed in order. */
    private final ResolverLifecycle rooms;
    /** The one owner of the current snapshot: the read path is one volatile read of its field. */
    private final SnapshotFanOut snapshots;
    /** {@code rollcall.readiness.*}: when {@link #ready()} says yes. */
    private final ReadinessRule readiness;
    /** The clock of the snapshots' times: how long the current one has been stale, for {@link #ready()}. */
    private final Clock clock;

    private WorkerResolver(Builder b, AbstractResolverBuilder.Parts parts) {
        Plugins chosen = parts.chosen();
        this.readiness = parts.readiness().forProtocol(
                chosen.protocol().protocol().capabilities().version() == ProbeCapabilities.Source.DISCOVERY);
        this.clock = b.clock;
        this.name = b.name != null ? b.name : String.valueOf(RESOLVERS.incrementAndGet());
        this.discovery = chosen.discovery();
        this.policy = chosen.policy();
        this.rooms = new ResolverLifecycle(new ResolverLifecycle.Given(name, RESOLVERS.incrementAndGet(), discovery,
                policy, parts.settings(), b.clock, b.ticker, b.scheduler, chosen.protocol(), parts.config()));
        this.snapshots = rooms.fanOut();
    }

    /** Builds a resolver from {@link RollcallConfig#load()}: the properties files, system properties and environment. */
    public static WorkerResolver fromConfig() {
        return builder().config(RollcallConfig.load()).build();
    }

    /** Builds a resolver from the given configuration alone. */
    public static WorkerResolver fromConfig(RollcallConfig config) {
        return builder().config(config).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The compatible workers of the current snapshot, ordered by URL. Lock-free. */
    public List<WorkerInfo> workers() {
        return snapshots.current().workers();
    }

    /** The current snapshot: one consistent state with every read view, for all work that must agree. Lock-free. */
    public FleetSnapshot pin() {
        return snapshots.current();
    }

    /**
     * The current snapshot, pinned until the returned lease is closed: take one per query, in a
     * try-with-resources around all of its work. With {@code rollcall.drain.exact=true} a worker that
     * the leased snapshot lists is not released while the lease is open (see {@link SnapshotLease});
     * otherwise it only pins, as {@link #pin()}. Lock-free, never blocks, any thread.
     */
    public SnapshotLease lease() {
        return SnapshotLease.take(rooms.leases(), snapshots);
    }

    /**
     * As {@link #lease()}, for a query that needs certain capabilities: the lease's snapshot is the
     * current one narrowed to {@code requirements} ({@link FleetSnapshot#requiring}): only the
     * compatible workers that meet them all, and for each other compatible worker what it lacks. With
     * exact drain it holds the whole snapshot, as {@link #lease()} does. Never blocks; costs about what
     * the narrowed workers cost, not a pass over the fleet.
     */
    public SnapshotLease lease(Requirements requirements) {
        return lease().narrowedTo(Objects.requireNonNull(requirements, "requirements"));
    }

    /**
     * The endpoints view, live: each call answers from the snapshot current at that moment (one
     * volatile read). Hand it to a consumer that needs only endpoints; for several calls that must
     * agree with each other, {@link #pin()} one snapshot instead.
     */
    public WorkerEndpoints endpoints() {
        return rooms.live();
    }

    /** The versions view, live (see {@link #endpoints()}). */
    public WorkerVersions versions() {
        return rooms.live();
    }

    /** The services view, live (see {@link #endpoints()}). */
    public WorkerServices services() {
        return rooms.live();
    }

    /** The invocation-targets view, live (see {@link #endpoints()}). */
    public InvocationTargets targets() {
        return rooms.live();
    }

    /**
     * The proto-symbols view, live (see {@link #endpoints()}): the schemas of the workers' versions.
     * For JSON mapping wrap it, or better a pinned snapshot, in {@code rollcall-schema-json}'s
     * {@code ProtoJsonMappers}.
     */
    public ProtoSymbols symbols() {
        return rooms.live();
    }

    /** The key-extractors view, live (see {@link #endpoints()}). */
    public KeyExtractors keyExtractors() {
        return rooms.live();
    }

    /**
     * The key-routing view, live (see {@link #endpoints()}). To extract a key and route it with
     * the same schema and workers, {@link #pin()} one snapshot and use it for both.
     */
    public KeyRouting keyRouting() {
        return rooms.live();
    }

    /**
     * Waits until the current snapshot has at least {@code min} compatible workers and returns it.
     *
     * @throws WorkersUnavailableException on timeout, with the counts of candidates, rejected by
     *                                     version, unreachable and pending
     */
    public FleetSnapshot awaitWorkers(int min, Duration timeout) throws WorkersUnavailableException, InterruptedException {
        if (min < 0) {
            throw new IllegalArgumentException("min " + min + " is negative");
        }
        FleetSnapshot s = rooms.fanOut().awaitSatisfying(timeout, snap -> snap.counts().compatible() >= min);
        if (s == null) {
            throw new WorkersUnavailableException(min, timeout, rooms.fanOut().current());
        }
        return s;
    }

    /**
     * Waits until the fleet has settled: discovery has answered and every candidate has a verdict
     * (compatible, rejected or unreachable; none pending), and returns that snapshot. Use it before
     * planning work at start-up, so that a query is not planned on the first worker that happened to
     * answer while the others are still being probed. A hung worker settles as unreachable after
     * {@code probe.timeout}.
     *
     * @throws TimeoutException naming how many candidates are still pending, or why discovery has not
     *                          answered, when the fleet does not settle in time (or the resolver is closed)
     */
    public FleetSnapshot awaitSettled(Duration timeout) throws TimeoutException, InterruptedException {
        return rooms.awaits().settled(timeout);
    }

    /**
     * Waits until the registry reaches version {@code number}, that is until a snapshot numbered
     * {@code number} or higher is published, and returns the current one. Wakes as soon as it is
     * published; nothing polls.
     *
     * @throws TimeoutException naming the number waited for and the current snapshot, when none is
     *                          published in time (or the resolver is closed)
     */
    public FleetSnapshot awaitVersion(long number, Duration timeout) throws TimeoutException, InterruptedException {
        return rooms.awaits().version(number, timeout);
    }

    /**
     * Waits until the current snapshot satisfies {@code condition} and returns it. The condition
     * is tested on the calling thread, at most once per published snapshot (the newest one when
     * several were published while it ran): nothing polls, and a slow condition delays only its
     * caller, never the resolver's publishing.
     *
     * @throws TimeoutException naming the last snapshot, when none satisfies it in time (or the
     *                          resolver is closed)
     */
    public FleetSnapshot await(Predicate<? super FleetSnapshot> condition, Duration timeout)
            throws TimeoutException, InterruptedException {
        return rooms.awaits().satisfying(condition, timeout);
    }

    /**
     * Calls {@code listener} with the current snapshot, then with newer ones, in increasing number,
     * on a thread of its own ({@code rollcall-listeners-<name>-N}, while it is registered). A
     * listener that blocks (a slow replan) delays only itself, never the resolver, the other
     * listeners or the {@code rollcall:} channels: while it is busy, only the newest snapshot waits
     * for it (latest wins), so it may skip snapshots, never see an older one after a newer. Close
     * the returned handle to stop (and its thread).
     */
    public SnapshotListener.Registration addListener(SnapshotListener listener) {
        Objects.requireNonNull(listener, "listener");
        Subscription subscription = rooms.fanOut().addListener(listener::onSnapshot, listener);
        return subscription::close;
    }

    /**
     * Calls {@code listener} with each {@link dev.rollcall.api.registry.FleetEvent} from now on
     * (workers joined, left, rejected; cohort switched), in order, on a thread of its own as
     * {@link #addListener} does: a listener that is busy when several snapshots come gets the events
     * between the last snapshot it was given and the newest (a worker that came and went meanwhile is
     * not reported). Close the returned handle to stop.
     */
    public SnapshotListener.Registration addEventListener(FleetEventListener listener) {
        Objects.requireNonNull(listener, "listener");
        Subscription subscription = rooms.fanOut().addEventListener(listener::onEvent, listener);
        return subscription::close;
    }

    /**
     * Whether this coordinator has enough compatible workers to take work, by
     * {@code rollcall.readiness.min-workers} (default 1; 0 = always ready) and
     * {@code rollcall.readiness.version} (default any): for a readiness probe, which should say
     * "not ready" until the fleet is there and again when it falls below; and not ready while
     * discovery's set has been stale for longer than {@code rollcall.readiness.max-stale} (default
     * 5 minutes when versions are discovery's claims, as under {@code none}; no bound when workers
     * answer for themselves), ready again once discovery answers. Answered from the current
     * snapshot and the {@link Builder#clock}; lock-free, never blocks, any thread.
     */
    public Readiness ready() {
        return readiness.evaluate(snapshots.current(), clock.instant());
    }

    /** How many probes this resolver has sent so far, successful or not. */
    public long probesSent() {
        return rooms.probes().sent();
    }

    /** How many probes failed (refused, timed out, bad answer) so far. */
    public long probesFailed() {
        return rooms.probes().failed();
    }

    /** Package-private hook for {@link RollcallMetrics}: kept probe channels, probe latencies as they happen. */
    ProbeScheduler<?> probes() {
        return rooms.probes();
    }

    /** This resolver's name, used in its thread names and metric tags. */
    public String name() {
        return name;
    }

    /** The policy in use. */
    public VersionPolicy policy() {
        return policy;
    }

    /** What the discovery backend in use says of itself, e.g. {@code etcd[/rollcall/workers/ at ...]}. */
    public String discoveryDescription() {
        return discovery.description();
    }

    /**
     * A target for {@code ManagedChannelBuilder.forTarget(...)}: a channel to it spreads calls over
     * this resolver's compatible workers ({@code round_robin}), follows every snapshot, and sends a
     * call only over a connection whose worker was verified after it connected — a worker that
     * restarts in place with a version the policy rejects gets no call. With no compatible worker,
     * calls fail {@code UNAVAILABLE} with the counts {@link #awaitWorkers} gives. Valid until
     * {@link #close()}. The {@code rollcall:} scheme is registered by {@code dev.rollcall:rollcall-grpc}
     * ({@code dev.rollcall.grpc.RollcallNameResolverProvider}), which must be on the class path.
     *
     * @throws IllegalStateException if {@code rollcall-grpc} is not on the class path
     */
    public String grpcTarget() {
        return rooms.calls().grpcTarget();
    }

    /**
     * Like {@link #grpcTarget()}, narrowed to the compatible workers that offer {@code service}
     * (a fully qualified gRPC service name, e.g. {@code demo.v1.Orders}).
     *
     * @throws IllegalArgumentException if {@code service} is blank or not a service name
     */
    public String grpcTarget(String service) {
        return rooms.calls().grpcTarget(service);
    }

    /**
     * Tells the resolver that a call to {@code endpoint} failed. {@code UNAVAILABLE} (refused, reset, gone away) takes
     * the worker out of use at once and probes it again ahead of its backoff; it is back when it answers.
     * {@code DEADLINE_EXCEEDED} is no proof (a slow query's deadline is the query's own): the worker stays in use and is
     * probed at once; only if that probe fails too (a silent worker) is it out, as after any failed probe. Other codes
     * are the call's own business and ignored. Rate-limited: a worker is taken out, or probed for a timed-out call, at
     * most once a second each, and failed calls never take more than a tenth of the workers in use out at once. For
     * calls made outside gRPC; gRPC calls can use {@link #callObserver()}. Never blocks; any thread.
     */
    public void reportFailure(WorkerEndpoint endpoint, Status status) {
        rooms.calls().reportFailure(endpoint, status);
    }

    /**
     * A {@link io.grpc.ClientInterceptor} that calls {@link #reportFailure} for each of the calls
     * through it that fails {@code UNAVAILABLE} or {@code DEADLINE_EXCEEDED}, naming the worker by
     * the connection's remote address (or, for a channel to one worker, its authority). Add it to the channels and Flight
     * clients you call workers with: a worker whose calls fail is out of new snapshots within
     * milliseconds instead of at its next probe. Thread-safe; one may serve every channel.
     */
    public ClientInterceptor callObserver() {
        return rooms.calls().callObserver();
    }

    /**
     * The channel this resolver probes {@code endpoint} over, for your own calls to that worker: one connection per
     * worker for probes and data (build Flight clients on it with
     * {@code FlightGrpcUtils.createFlightClientWithSharedChannel}). The same channel for the worker's whole stay; the resolver
     * closes it when the worker leaves discovery or the resolver closes, and refuses {@code shutdown()} from you. Take
     * endpoints from a snapshot: the channel follows the address, so after a restart in place it reaches the new
     * process, which the snapshot may not accept (calls through {@link #grpcTarget()} are verified; these are not).
     * Messages of any size pass, as with Flight's own {@code FlightClient} (a 4 MiB record batch included):
     * {@code rollcall.probe.max-response-bytes} bounds the resolver's own calls on it, per call; bound yours the same way
     * ({@code stub.withMaxInboundMessageSize(n)}). Blocks briefly (one task on the resolver's thread).
     *
     * @throws IllegalArgumentException if {@code endpoint} is not a candidate now
     * @throws IllegalStateException    if the resolver is closed
     */
    public ManagedChannel channel(WorkerEndpoint endpoint) {
        return rooms.calls().channel(endpoint);
    }

    /** Whether {@link #close()} was called: nothing is verified any more, the last snapshot is final. Any thread. */
    public boolean isClosed() {
        return rooms.closed();
    }

    /**
     * Closes the discovery backend, cancels probes and timers, closes every channel and stops the
     * resolver's threads. Readers keep seeing the last snapshot; callers blocked in an {@code await}
     * return. Idempotent.
     */
    @Override
    public void close() {
        rooms.close();
    }

    @Override
    public String toString() {
        return "WorkerResolver[" + name + ", " + rooms.fanOut().current() + "]";
    }

    /**
     * Configures a {@link WorkerResolver}. Values set here win over the configuration; anything
     * unset comes from {@link #config(RollcallConfig)}, or else from the defaults. Each setter names
     * its key, checks its argument at once against the key's bounds (the error names the key), and
     * docs/configuration.md gives every key with its default. Not thread-safe.
     */
    public static final class Builder extends AbstractResolverBuilder {

        private Builder() {
        }

        @Override
        Builder self() {
            return this;
        }

        /**
         * Validates everything (undeclared keys first), finds the backend and the policy, and starts resolving.
         *
         * @throws ConfigurationException naming the key, the value and its source, or the type that no
         *                                module provides (with the ones found)
         */
        public WorkerResolver build() {
            WorkerResolver resolver = new WorkerResolver(this, parts());
            resolver.rooms.start(); // closes the resolver again when a part fails to start
            return resolver;
        }
    }
}
