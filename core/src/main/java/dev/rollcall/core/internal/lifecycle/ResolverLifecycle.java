package dev.rollcall.core.internal.lifecycle;

import dev.rollcall.api.Backoff;
import dev.rollcall.api.Scheduler;
import dev.rollcall.api.Settings;
import dev.rollcall.api.Ticker;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.internal.NamedThreads;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.internal.LiveResolvers;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.core.internal.calls.CallPath;
import dev.rollcall.core.internal.drain.DrainReleases;
import dev.rollcall.core.internal.drain.ExactDrain;
import dev.rollcall.core.internal.drain.HolderIds;
import dev.rollcall.core.internal.drain.LeaseTable;
import dev.rollcall.core.internal.drain.ReleaseCall;
import dev.rollcall.core.internal.fleet.CandidateCache;
import dev.rollcall.core.internal.fleet.DiscoveryFeed;
import dev.rollcall.core.internal.fleet.FleetTracker;
import dev.rollcall.core.internal.fleet.TrackerFeatures;
import dev.rollcall.core.internal.probe.ProbeScheduler;
import dev.rollcall.core.internal.probe.ProtocolTransport;
import dev.rollcall.core.internal.protocols.ProbeProtocols;
import dev.rollcall.core.internal.schema.VersionSchemas;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.settings.CacheSettings;
import dev.rollcall.core.internal.settings.ProbeSettings;
import dev.rollcall.core.internal.settings.ResolverSettings;
import dev.rollcall.core.internal.settings.SchemaSettings;
import dev.rollcall.core.internal.snapshot.LiveViews;
import dev.rollcall.core.internal.snapshot.SnapshotAwaits;
import dev.rollcall.core.internal.snapshot.SnapshotBuilder;
import dev.rollcall.core.internal.snapshot.SnapshotFanOut;
import dev.rollcall.core.internal.snapshot.Subset;
import io.grpc.ManagedChannel;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rooms of one resolver behind its facade: builds them in order, each with its parts (the probe
 * client, the serial context and its thread, the fan-out that owns the current snapshot, schemas,
 * the tracker with its probe scheduler, snapshot builder and exact drain, the call path), starts
 * them (the tracker's cache-file timer, discovery, the {@code rollcall:} bridge), and closes them
 * in the one order that stops cleanly: discovery (no more news), the tracker and schemas on its
 * context (no more probes or timers), the context's thread, the channels, their event loop, last
 * the listeners.
 *
 * <p>A candidate set's walk: discovery's feed hops onto the serial context, the tracker applies
 * it and asks its pacer for a build, the builder builds, and the tracker publishes the snapshot to
 * the fan-out, which exact drain listens to and the facade reads.
 *
 * <p>{@link #start()} and {@link #close()} on the facade's caller's thread; the parts' own threads
 * as each says. {@link #close()} is idempotent.
 */
public final class ResolverLifecycle {

    /** Logs as the facade does: users set the level of {@code dev.rollcall.core.WorkerResolver}. */
    private static final Logger log = LoggerFactory.getLogger("dev.rollcall.core.WorkerResolver");

    /**
     * What the facade's builder chose: the resolver's name and the sequence number of its
     * {@code rollcall:} target id, its backend and policy, its settings, and its time ({@code ticker}
     * and {@code scheduler} null for real time), and its whole configuration (the builder's values its
     * top layer), which the {@code rollcall:} channels read their own keys from.
     */
    public record Given(String name, int sequence, WorkerDiscovery discovery, VersionPolicy policy,
                        ResolverSettings settings, Clock clock, Ticker ticker, Scheduler scheduler,
                        ProbeProtocols.Chosen protocol, Settings config) {
    }

    private final String name;
    private final WorkerDiscovery discovery;
    private final VersionPolicy policy;
    private final ProbeClient probes;
    private final ScheduledThreadPoolExecutor serialThread;
    private final SerialContext context;
    private final SnapshotFanOut fanOut;
    /** The facade's waits that fail naming what they waited for. */
    private final SnapshotAwaits awaits;
    private final FleetTracker tracker;
    /** Schema fetching; null when the resolver fetches none (closed with the tracker). */
    private final VersionSchemas schemas;
    private final LiveViews live;
    private final Optional<CandidateCache> cache;
    /** {@code rollcall.discovery.max-candidates}: larger sets from discovery are refused. */
    private final int maxCandidates;
    /** The user's calls: rollcall: targets, shared channels, failed calls. */
    private final CallPath calls;
    private volatile boolean closed;

    public ResolverLifecycle(Given given) {
        ResolverSettings settings = given.settings();
        ProbeSettings probe = settings.probe();
        SchemaSettings schema = settings.schema();
        CacheSettings cached = settings.cache();
        this.name = given.name();
        this.discovery = given.discovery();
        this.policy = given.policy();
        HolderIds holderIds = settings.exactDrain() ? HolderIds.random() : null;
        this.probes = new ProbeClient("rollcall-probe-" + name, probe.maxResponseBytes(), probe.tls(), holderIds);
        this.serialThread = new ScheduledThreadPoolExecutor(1, NamedThreads.daemon("rollcall-resolver-" + name));
        this.serialThread.setRemoveOnCancelPolicy(true);
        Ticker ticker = given.ticker() != null ? given.ticker() : Ticker.systemTicker();
        Scheduler scheduler = given.scheduler() != null ? given.scheduler()
                : Scheduler.forScheduledExecutorService(serialThread);
        this.context = new SerialContext(serialThread, scheduler, ticker);
        FleetSnapshot initial = FleetSnapshot.builder(0).publishedAt(given.clock().instant())
                .policy(policy.description()).build();
        ThreadFactory listenerThreads = NamedThreads.daemon("rollcall-listeners-" + name);
        this.fanOut = new SnapshotFanOut(name, initial, () -> Executors.newSingleThreadExecutor(listenerThreads),
                Executors.newSingleThreadExecutor(NamedThreads.daemon("rollcall-followers-" + name)), ticker);
        this.awaits = new SnapshotAwaits(fanOut);
        this.live = new LiveViews(fanOut::current);
        this.maxCandidates = settings.maxCandidates();
        this.cache = cached == null ? Optional.empty() : Optional.of(new CandidateCache(cached, name));
        RandomGenerator jitter = new SplittableRandom(); // used on the serial context only
        // A protocol that never connects (none) fetches no schema either: nothing dials the workers.
        this.schemas = !schema.used() || !given.protocol().connects() ? null : new VersionSchemas(schema, context, jitter,
                probes, probe.timeout(), Backoff.of(probe.backoffInitial(), probe.backoffMax()), this::schemasChanged);
        // rollcall: HTTP/2 pings on every channel of a link (kept ones, and those handed out by
        // channel(endpoint); one that lives for one probe closes long before its first ping). Other
        // protocols' servers may punish pings: their kept links are checked by a call instead.
        ProbeClient.Http2Keepalive keepalive = new ProbeClient.Http2Keepalive(probe.http2KeepaliveTime(),
                probe.keepaliveTimeout());
        FleetTracker.Parts parts = new FleetTracker.Parts(context,
                ProtocolTransport.of(given.protocol(), probes, keepalive, new ProtocolTransport.Liveness(
                        probe.keepaliveTime(), probe.keepaliveTimeout()), probe.maxResponseBytes()),
                given.clock(), jitter, ManagementFactory.getThreadMXBean()::getCurrentThreadCpuTime);
        this.tracker = new FleetTracker(parts, probe, settings.publish().intervalNanos(),
                features(settings, holderIds, initial, cached == null ? Duration.ZERO : cached.maxWait()),
                new SnapshotBuilder(policy, given.clock(), schemas, schema.keys(), settings.labels(), context::nanoTime,
                        initial), fanOut);
        // Exact drain's leases move to each snapshot before anyone reads it.
        fanOut.beforeEachPublish(tracker.drains()::published);
        // rollcall: name resolvers follow on a path of their own: never behind a user's listener.
        this.calls = new CallPath(name, given.sequence(), context, tracker.calls(), fanOut::current, () -> closed,
                fanOut::addFollower, probe, given.config());
    }

    /** The tracker's parts for what the settings turn on; each a do-nothing part when off. */
    private TrackerFeatures features(ResolverSettings settings, HolderIds holderIds, FleetSnapshot initial,
                                     Duration cacheMaxWait) {
        Optional<Subset> subset = Optional.ofNullable(settings.subset()).map(Subset::new);
        subset.ifPresent(s -> log.info("resolver {}: subsets on: using {} of the accepted workers, chosen on "
                + "coordinator id '{}'", name, s.size(), s.coordinatorId()));
        ExactDrain.Maker drains = ExactDrain.Maker.OFF;
        if (settings.exactDrain()) {
            Duration timeout = settings.probe().timeout();
            drains = channels -> new DrainReleases(context, new ReleaseCall(channels, timeout), holderIds, initial);
            log.debug("resolver {}: exact drain on, a holder id per worker from a secret of its own", name);
        }
        return new TrackerFeatures(schemas == null ? TrackerFeatures.SchemaGate.NONE : schemas::ready, drains, subset,
                cache, cacheMaxWait);
    }

    /** The current snapshot, awaiters and listeners. */
    public SnapshotFanOut fanOut() {
        return fanOut;
    }

    /** The waits for a settled fleet, a version, a condition. */
    public SnapshotAwaits awaits() {
        return awaits;
    }

    /** The read views, answering from the current snapshot. */
    public LiveViews live() {
        return live;
    }

    /** The user's calls. */
    public CallPath calls() {
        return calls;
    }

    /** The probe scheduler, for its counters and observers (any thread). */
    public ProbeScheduler<?> probes() {
        return tracker.probes();
    }

    /** The leases of the published snapshots, or null when exact drain is off (a lease then only pins). */
    public LeaseTable leases() {
        return tracker.drains().leases();
    }

    /** A schema arrived, failed or is due for a retry; on the serial context, after construction. */
    private void schemasChanged() {
        tracker.schemasChanged();
    }

    /**
     * Starts the cache file's timer, discovery and the {@code rollcall:} bridge; when a part fails to
     * start, closes everything again ({@link #close()}) and rethrows.
     */
    public void start() {
        try {
            context.execute(tracker::start);
            discovery.start(new DiscoveryFeed(context, tracker, maxCandidates));
            LiveResolvers.add(calls);
            log.info("resolver {} started: discovery {}, policy {}", name, discovery.description(), policy.description());
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Whether {@link #close()} has begun. */
    public boolean closed() {
        return closed;
    }

    /** Stops everything in order (see the class's comment). Idempotent. */
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        LiveResolvers.remove(calls);
        try {
            discovery.close();
        } catch (RuntimeException e) {
            log.warn("discovery {} failed to close", discovery.description(), e);
        }
        List<ManagedChannel> channels = List.of();
        CompletableFuture<List<ManagedChannel>> stopped = new CompletableFuture<>();
        context.execute(() -> {
            List<ManagedChannel> closing = tracker.close();
            if (schemas != null) {
                closing.addAll(schemas.close());
            }
            stopped.complete(closing);
        });
        try {
            channels = stopped.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn("resolver {} did not stop its probes cleanly", name, e);
        }
        serialThread.shutdownNow();
        // The event loop must outlive its channels: a late frame on a channel whose loop is gone makes
        // Netty log a "Panic!" about a terminated executor.
        // Real time whatever the injected ticker: threads and sockets stop in real time.
        Ticker realTime = Ticker.systemTicker();
        long deadline = realTime.read() + TimeUnit.SECONDS.toNanos(5);
        try {
            for (ManagedChannel channel : channels) {
                long left = deadline - realTime.read();
                if (left <= 0 || !channel.awaitTermination(left, TimeUnit.NANOSECONDS)) {
                    log.debug("resolver {}: probe channels still closing after 5 s", name);
                    break;
                }
            }
            serialThread.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        probes.close();
        cache.ifPresent(CandidateCache::close);
        fanOut.close();
        calls.resolverClosed();
        log.info("resolver {} closed", name);
    }
}
