package dev.rollcall.core;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.InvocationTargets;
import dev.rollcall.api.registry.WorkerEndpoints;
import dev.rollcall.api.registry.WorkerServices;
import dev.rollcall.api.registry.WorkerVersions;
import dev.rollcall.core.internal.NamedThreads;
import dev.rollcall.core.internal.ProbeClient;
import dev.rollcall.core.internal.ProbeTls;
import dev.rollcall.core.internal.ProviderLookup;
import dev.rollcall.core.internal.UnknownKeys;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 *   <li>When discovery fails, the last good set is kept and snapshots say since when it is
 *       stale.</li>
 * </ul>
 *
 * <h2>Threads</h2>
 * All state changes happen on one thread, {@code rollcall-resolver-<name>}; probes run on
 * {@code rollcall-probe-<name>} event-loop threads; listeners on {@code rollcall-listeners-<name>}.
 * Reads ({@link #workers()}, {@link #pin()}) are one volatile read, never block, and may be called
 * from any thread. {@link #close()} stops every thread and connection the resolver started, and
 * closes the discovery backend.
 */
public final class WorkerResolver implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WorkerResolver.class);
    private static final AtomicInteger RESOLVERS = new AtomicInteger();

    private final String name;
    private final WorkerDiscovery discovery;
    private final VersionPolicy policy;
    private final ProbeClient probes;
    private final ScheduledThreadPoolExecutor serial;
    private final ExecutorService listenerExecutor;
    private final FleetTracker tracker;
    private final List<Subscriber> listeners = new CopyOnWriteArrayList<>();
    private final List<FleetEventListener> eventListeners = new CopyOnWriteArrayList<>();
    /** The snapshot the last events were computed up to; touched only on the listener thread. */
    private FleetSnapshot eventBaseline;
    private final Object published = new Object();
    private final AtomicReference<PendingDiscovery> pending = new AtomicReference<>();
    private volatile FleetSnapshot current;
    private final LiveViews live = new LiveViews(() -> current);
    private volatile boolean closed;

    /** A listener and the last snapshot it was given; touched only on the listener thread. */
    private static final class Subscriber {
        final SnapshotListener listener;
        long delivered = -1;

        Subscriber(SnapshotListener listener) {
            this.listener = listener;
        }
    }

    /** The latest unapplied discovery news: a set, and whether an error came after it. */
    private record PendingDiscovery(Set<WorkerEndpoint> candidates, Throwable errorAfter) {
    }

    /** Schema fetching and routing keys: {@code rollcall.schemas.*}, {@code rollcall.keys.*}. */
    private record SchemaOptions(boolean fetch, int maxResponseBytes, dev.rollcall.api.registry.KeyPaths keys) {
    }

    private WorkerResolver(Builder b, WorkerDiscovery discovery, VersionPolicy policy, ResolverOptions options,
                           ProbeTls tls, SchemaOptions schemaOptions) {
        this.name = b.name != null ? b.name : String.valueOf(RESOLVERS.incrementAndGet());
        this.discovery = discovery;
        this.policy = policy;
        this.probes = new ProbeClient("rollcall-probe-" + name, options.maxResponseBytes(), tls);
        this.serial = new ScheduledThreadPoolExecutor(1, NamedThreads.daemon("rollcall-resolver-" + name));
        this.serial.setRemoveOnCancelPolicy(true);
        this.listenerExecutor = Executors.newSingleThreadExecutor(NamedThreads.daemon("rollcall-listeners-" + name));
        this.current = FleetSnapshot.of(0, b.clock.instant(), null, policy.description(), List.of());
        this.tracker = new FleetTracker(serial, probes, policy, options, b.clock, current, this::publish);
        if (schemaOptions.fetch() || !schemaOptions.keys().asMap().isEmpty()) {
            tracker.useSchemas(new VersionSchemas(schemaOptions.fetch(), serial, probes, options.probeTimeout(),
                    schemaOptions.maxResponseBytes(), dev.rollcall.api.Backoff.of(options.backoffInitial(),
                    options.backoffMax()), schemaOptions.keys(), tracker::schemasChanged), schemaOptions.keys());
        }
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
        return current.workers();
    }

    /**
     * The current snapshot: one consistent state that implements every read view, for all the work
     * that must agree on the fleet. Lock-free.
     */
    public FleetSnapshot pin() {
        return current;
    }

    /**
     * The endpoints view, live: each call answers from the snapshot current at that moment (one
     * volatile read). Hand it to a consumer that needs only endpoints; for several calls that must
     * agree with each other, {@link #pin()} one snapshot instead.
     */
    public WorkerEndpoints endpoints() {
        return live;
    }

    /** The versions view, live (see {@link #endpoints()}). */
    public WorkerVersions versions() {
        return live;
    }

    /** The services view, live (see {@link #endpoints()}). */
    public WorkerServices services() {
        return live;
    }

    /** The invocation-targets view, live (see {@link #endpoints()}). */
    public InvocationTargets targets() {
        return live;
    }

    /**
     * The proto-symbols view, live (see {@link #endpoints()}): the schemas of the workers' versions.
     * For JSON mapping wrap it, or better a pinned snapshot, in {@code rollcall-schema-json}'s
     * {@code ProtoJsonMappers}.
     */
    public dev.rollcall.api.registry.ProtoSymbols symbols() {
        return live;
    }

    /** The key-extractors view, live (see {@link #endpoints()}). */
    public dev.rollcall.api.registry.KeyExtractors keyExtractors() {
        return live;
    }

    /**
     * The key-routing view, live (see {@link #endpoints()}). To extract a key and route it with
     * the same schema and workers, {@link #pin()} one snapshot and use it for both.
     */
    public dev.rollcall.api.registry.KeyRouting keyRouting() {
        return live;
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
        FleetSnapshot s = awaitUntil(timeout, snap -> snap.counts().compatible() >= min);
        if (s.counts().compatible() < min) {
            throw new WorkersUnavailableException(min, timeout, s);
        }
        return s;
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
        FleetSnapshot s = awaitUntil(timeout, snap -> snap.number() >= number);
        if (s.number() < number) {
            throw new TimeoutException("snapshot " + number + " was not published within " + timeout
                    + (closed ? " (the resolver is closed)" : "") + "; the current one is " + s);
        }
        return s;
    }

    /**
     * Waits until the current snapshot satisfies {@code condition} and returns it. The condition
     * is tested on the calling thread, once per published snapshot: nothing polls.
     *
     * @throws TimeoutException naming the last snapshot, when none satisfies it in time (or the
     *                          resolver is closed)
     */
    public FleetSnapshot await(Predicate<? super FleetSnapshot> condition, Duration timeout)
            throws TimeoutException, InterruptedException {
        FleetSnapshot s = awaitUntil(timeout, condition);
        if (!condition.test(s)) {
            throw new TimeoutException("no snapshot satisfied the condition within " + timeout
                    + (closed ? " (the resolver is closed)" : "") + "; last: " + s);
        }
        return s;
    }

    private FleetSnapshot awaitUntil(Duration timeout, Predicate<? super FleetSnapshot> done)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (published) {
            while (true) {
                FleetSnapshot s = current;
                long left = deadline - System.nanoTime();
                if (done.test(s) || left <= 0 || closed) {
                    return s;
                }
                TimeUnit.NANOSECONDS.timedWait(published, left);
            }
        }
    }

    /**
     * Calls {@code listener} with the current snapshot, then with each new one, on the listener
     * thread. Close the returned handle to stop.
     */
    public SnapshotListener.Registration addListener(SnapshotListener listener) {
        Objects.requireNonNull(listener, "listener");
        Subscriber subscriber = new Subscriber(listener);
        listenerExecutor.execute(() -> {
            listeners.add(subscriber);
            deliver(subscriber, current);
        });
        return () -> listeners.remove(subscriber);
    }

    /**
     * Calls {@code listener} with each {@link dev.rollcall.api.registry.FleetEvent} from now on
     * (workers joined, left, rejected; cohort switched), on the listener thread, in order. Close
     * the returned handle to stop.
     */
    public SnapshotListener.Registration addEventListener(FleetEventListener listener) {
        Objects.requireNonNull(listener, "listener");
        listenerExecutor.execute(() -> {
            if (eventBaseline == null) {
                eventBaseline = current;
            }
            eventListeners.add(listener);
        });
        return () -> eventListeners.remove(listener);
    }

    /** How many probes this resolver has sent so far, successful or not. */
    public long probesSent() {
        return tracker.probesSent();
    }

    /** How many probes failed (refused, timed out, bad answer) so far. */
    public long probesFailed() {
        return tracker.probesFailed();
    }

    /** Package-private hook for {@link RollcallMetrics}: probe latencies as they happen. */
    void addProbeObserver(FleetTracker.ProbeObserver observer) {
        tracker.addObserver(observer);
    }

    /** This resolver's name, used in its thread names and metric tags. */
    public String name() {
        return name;
    }

    /** The policy in use. */
    public VersionPolicy policy() {
        return policy;
    }

    /** The discovery backend in use. */
    public WorkerDiscovery discovery() {
        return discovery;
    }

    private void start() {
        discovery.start(new CandidateListener() {
            @Override
            public void onCandidates(Set<WorkerEndpoint> latest) {
                Set<WorkerEndpoint> copy = Set.copyOf(latest);
                if (pending.getAndSet(new PendingDiscovery(copy, null)) == null) {
                    submit(WorkerResolver.this::drainDiscovery);
                }
            }

            @Override
            public void onError(Throwable cause) {
                PendingDiscovery before = pending.getAndUpdate(
                        p -> new PendingDiscovery(p == null ? null : p.candidates(), cause));
                if (before == null) {
                    submit(WorkerResolver.this::drainDiscovery);
                }
            }
        });
        log.info("resolver {} started: discovery {}, policy {}", name, discovery.description(), policy.description());
    }

    /** Applies the newest discovery news; older sets that were replaced meanwhile are skipped. */
    private void drainDiscovery() {
        PendingDiscovery news = pending.getAndSet(null);
        if (news == null) {
            return;
        }
        if (news.candidates() != null) {
            tracker.applyCandidates(news.candidates());
        }
        if (news.errorAfter() != null) {
            tracker.discoveryFailed(news.errorAfter());
        }
    }

    private void submit(Runnable task) {
        try {
            serial.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            log.debug("resolver {} is closed; ignoring discovery news", name);
        }
    }

    /** Called on the serial thread with each new snapshot. */
    private void publish(FleetSnapshot snapshot) {
        current = snapshot;
        synchronized (published) {
            published.notifyAll();
        }
        log.debug("resolver {} published {}", name, snapshot);
        if (!listeners.isEmpty() || !eventListeners.isEmpty()) {
            try {
                listenerExecutor.execute(() -> {
                    listeners.forEach(l -> deliver(l, snapshot));
                    emitEvents(snapshot);
                });
            } catch (java.util.concurrent.RejectedExecutionException closing) {
                log.debug("resolver {} is closing; snapshot {} not delivered to listeners", name, snapshot.number());
            }
        }
    }

    /** On the listener thread: the events from the last baseline to {@code snapshot}. */
    private void emitEvents(FleetSnapshot snapshot) {
        if (eventListeners.isEmpty()) {
            eventBaseline = null;
            return;
        }
        if (eventBaseline == null || snapshot.number() <= eventBaseline.number()) {
            eventBaseline = eventBaseline == null ? snapshot : eventBaseline;
            return;
        }
        List<dev.rollcall.api.registry.FleetEvent> events = dev.rollcall.api.registry.FleetEvent.between(eventBaseline,
                snapshot);
        eventBaseline = snapshot;
        for (dev.rollcall.api.registry.FleetEvent event : events) {
            for (FleetEventListener l : eventListeners) {
                try {
                    l.onEvent(event);
                } catch (RuntimeException e) {
                    log.warn("event listener {} failed on {}", l, event, e);
                }
            }
        }
    }

    /** On the listener thread: each snapshot once per listener, in increasing number. */
    private void deliver(Subscriber subscriber, FleetSnapshot snapshot) {
        if (snapshot.number() <= subscriber.delivered || !listeners.contains(subscriber)) {
            return;
        }
        subscriber.delivered = snapshot.number();
        SnapshotListener listener = subscriber.listener;
        try {
            listener.onSnapshot(snapshot);
        } catch (RuntimeException e) {
            log.warn("snapshot listener {} failed on snapshot {}", listener, snapshot.number(), e);
        }
    }

    /**
     * Closes the discovery backend, cancels probes and timers, closes every channel and stops the
     * resolver's threads. Readers keep seeing the last snapshot. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            discovery.close();
        } catch (RuntimeException e) {
            log.warn("discovery {} failed to close", discovery.description(), e);
        }
        List<io.grpc.ManagedChannel> channels = List.of();
        try {
            channels = serial.submit(tracker::close).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn("resolver {} did not stop its probes cleanly", name, e);
        }
        serial.shutdownNow();
        // The event loop must outlive its channels: a late frame on a channel whose loop is gone makes
        // Netty log a "Panic!" about a terminated executor.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        try {
            for (io.grpc.ManagedChannel channel : channels) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !channel.awaitTermination(left, TimeUnit.NANOSECONDS)) {
                    log.debug("resolver {}: probe channels still closing after 5 s", name);
                    break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        probes.close();
        listenerExecutor.shutdown();
        try {
            serial.awaitTermination(5, TimeUnit.SECONDS);
            listenerExecutor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        listenerExecutor.shutdownNow();
        synchronized (published) {
            published.notifyAll();
        }
        log.info("resolver {} closed", name);
    }

    @Override
    public String toString() {
        return "WorkerResolver[" + name + ", " + current + "]";
    }

    /**
     * Configures a {@link WorkerResolver}. Values set here win over the configuration; anything
     * unset comes from {@link #config(RollcallConfig)}, or else from the defaults. Not thread-safe.
     *
     * <table>
     *   <caption>Configuration keys read by the resolver</caption>
     *   <tr><th>key</th><th>default</th></tr>
     *   <tr><td>{@code rollcall.discovery.type}</td><td>required unless {@link #discovery} is set</td></tr>
     *   <tr><td>{@code rollcall.policy.type}</td><td>required unless {@link #policy} is set</td></tr>
     *   <tr><td>{@code rollcall.probe.timeout}</td><td>2s</td></tr>
     *   <tr><td>{@code rollcall.probe.concurrency}</td><td>64</td></tr>
     *   <tr><td>{@code rollcall.probe.backoff.initial}</td><td>250ms</td></tr>
     *   <tr><td>{@code rollcall.probe.backoff.max}</td><td>30s</td></tr>
     *   <tr><td>{@code rollcall.probe.refresh-interval}</td><td>10m</td></tr>
     *   <tr><td>{@code rollcall.probe.keep-channels}</td><td>true</td></tr>
     *   <tr><td>{@code rollcall.probe.max-response-bytes}</td><td>1048576</td></tr>
     *   <tr><td>{@code rollcall.probe.tls.ca}</td><td>the JDK's trust store: PEM file of the CA
     *       certificate(s) that {@code grpcs://} workers' certificates must chain to</td></tr>
     *   <tr><td>{@code rollcall.probe.tls.cert}</td><td>none: PEM client certificate (chain) presented to
     *       {@code grpcs://} workers that require one (mutual TLS); needs {@code tls.key}</td></tr>
     *   <tr><td>{@code rollcall.probe.tls.key}</td><td>none: PEM PKCS#8 private key of
     *       {@code tls.cert}; needs {@code tls.cert}. Never logged or shown</td></tr>
     *   <tr><td>{@code rollcall.probe.tls.authority}</td><td>the endpoint's host: the name the
     *       workers' certificates are checked against (and sent as SNI), for endpoints whose address
     *       the certificate does not name (pod IPs behind a service name)</td></tr>
     *   <tr><td>{@code rollcall.schemas.fetch}</td><td>true: fetch each worker version's schema through
     *       gRPC server reflection once, and publish a worker once its version's schema is known</td></tr>
     *   <tr><td>{@code rollcall.schemas.max-response-bytes}</td><td>4194304: the most one version's
     *       reflection answers may add up to</td></tr>
     *   <tr><td>{@code rollcall.keys.<service>.<method>}</td><td>none: the field path of the routing key of
     *       a method's requests, e.g. {@code rollcall.keys.demo.v1.Orders.Place=order.customer_id}
     *       (see {@link dev.rollcall.api.registry.KeyPaths})</td></tr>
     * </table>
     *
     * <p>TLS settings apply to {@code grpcs://} endpoints; {@code grpc://} ones stay plaintext, and
     * both kinds may be mixed in one fleet. The files are read and checked once, at {@link #build()}:
     * a missing, unreadable or non-PEM file fails naming its key and path, never its content. A
     * worker whose certificate is not trusted, does not name its address, or that refuses the client
     * certificate is unreachable, with the TLS failure as the reason (fail closed).
     */
    public static final class Builder {
        private RollcallConfig config;
        private WorkerDiscovery discovery;
        private VersionPolicy policy;
        private Duration probeTimeout;
        private Integer probeConcurrency;
        private Duration backoffInitial;
        private Duration backoffMax;
        private Duration refreshInterval;
        private Boolean keepChannels;
        private Integer maxResponseBytes;
        private java.nio.file.Path tlsCa;
        private java.nio.file.Path tlsCert;
        private java.nio.file.Path tlsKey;
        private String tlsAuthority;
        private Boolean fetchSchemas;
        private dev.rollcall.api.registry.KeyPaths keyPaths;
        private Clock clock = Clock.systemUTC();
        private String name;
        private ClassLoader classLoader;

        private Builder() {
        }

        /** Where unset values come from; default none (only the values set here, and defaults). */
        public Builder config(RollcallConfig config) {
            this.config = Objects.requireNonNull(config, "config");
            return this;
        }

        /** The discovery backend to use instead of {@code rollcall.discovery.type}. The resolver closes it. */
        public Builder discovery(WorkerDiscovery discovery) {
            this.discovery = Objects.requireNonNull(discovery, "discovery");
            return this;
        }

        /** The policy to use instead of {@code rollcall.policy.type}. */
        public Builder policy(VersionPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** The deadline of each probe ({@code rollcall.probe.timeout}, default 2 s). */
        public Builder probeTimeout(Duration timeout) {
            this.probeTimeout = positive(timeout, "probeTimeout");
            return this;
        }

        /** At most this many probes in flight ({@code rollcall.probe.concurrency}, default 64). */
        public Builder probeConcurrency(int concurrency) {
            if (concurrency < 1) {
                throw new IllegalArgumentException("probeConcurrency " + concurrency + " is below 1");
            }
            this.probeConcurrency = concurrency;
            return this;
        }

        /**
         * Retry delays after failed probes: {@code initial}, doubling up to {@code max}, each up to 20 %
         * shorter at random. A worker that answers and fails again soon keeps its count (flap damping):
         * the delays start over only once it stayed up for ten {@code initial} delays, or {@code max}
         * if that is shorter.
         */
        public Builder backoff(Duration initial, Duration max) {
            this.backoffInitial = positive(initial, "backoff initial");
            this.backoffMax = positive(max, "backoff max");
            return this;
        }

        /** Re-probe a worker that answered after this long even if nothing changed (default 10 min). */
        public Builder refreshInterval(Duration interval) {
            this.refreshInterval = positive(interval, "refreshInterval");
            return this;
        }

        /**
         * Whether to keep one idle connection per worker (default true). Kept connections notice a
         * worker that restarts in place at once (about 15 KB of heap and one file descriptor per
         * worker); without them a restart is noticed at the next refresh.
         */
        public Builder keepProbeChannels(boolean keep) {
            this.keepChannels = keep;
            return this;
        }

        /** The largest {@code WorkerInfo} answer accepted (default 1 MiB): a hostile worker cannot exhaust memory. */
        public Builder maxResponseBytes(int bytes) {
            if (bytes < 1024) {
                throw new IllegalArgumentException("maxResponseBytes " + bytes + " is below 1024");
            }
            this.maxResponseBytes = bytes;
            return this;
        }

        /**
         * The CA certificates (one PEM file) that {@code grpcs://} workers' certificates must chain
         * to, instead of the JDK's trust store ({@code rollcall.probe.tls.ca}).
         */
        public Builder probeTrust(java.nio.file.Path caPemFile) {
            this.tlsCa = Objects.requireNonNull(caPemFile, "caPemFile");
            return this;
        }

        /**
         * The client certificate (PEM chain) and its PKCS#8 private key (PEM) that probes present to
         * {@code grpcs://} workers requiring mutual TLS ({@code rollcall.probe.tls.cert} and
         * {@code rollcall.probe.tls.key}).
         */
        public Builder probeClientCertificate(java.nio.file.Path certificateChainPemFile,
                                              java.nio.file.Path privateKeyPemFile) {
            this.tlsCert = Objects.requireNonNull(certificateChainPemFile, "certificateChainPemFile");
            this.tlsKey = Objects.requireNonNull(privateKeyPemFile, "privateKeyPemFile");
            return this;
        }

        /**
         * The name {@code grpcs://} workers' certificates are checked against (and sent as SNI),
         * instead of each endpoint's host ({@code rollcall.probe.tls.authority}).
         */
        public Builder probeAuthority(String authority) {
            this.tlsAuthority = Objects.requireNonNull(authority, "authority");
            return this;
        }

        /**
         * Whether to fetch each worker version's schema through gRPC server reflection
         * ({@code rollcall.schemas.fetch}, default true). When on, a worker is published once its
         * version's schema is known (or its fetch has failed once; it is retried in the background).
         */
        public Builder fetchSchemas(boolean fetch) {
            this.fetchSchemas = fetch;
            return this;
        }

        /** The routing key paths, instead of {@code rollcall.keys.*}. */
        public Builder keyPaths(dev.rollcall.api.registry.KeyPaths keys) {
            this.keyPaths = Objects.requireNonNull(keys, "keys");
            return this;
        }

        /** The clock for snapshot timestamps; default UTC system clock. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** A name for thread names and logs; default a number. */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /** Where providers are looked up; default the thread's context class loader. */
        public Builder classLoader(ClassLoader loader) {
            this.classLoader = Objects.requireNonNull(loader, "classLoader");
            return this;
        }

        /**
         * Validates everything, finds the backend and the policy, and starts resolving.
         *
         * @throws ConfigurationException naming the key and value at fault, or the type that no
         *                                module provides (with the ones found)
         */
        public WorkerResolver build() {
            RollcallConfig cfg = config != null ? config : RollcallConfig.of(java.util.Map.of());
            Settings root = cfg.settings();
            Settings probe = root.scope("rollcall.probe.");
            ResolverOptions options = new ResolverOptions(
                    probeTimeout != null ? probeTimeout : probe.positiveDuration("timeout", Duration.ofSeconds(2)),
                    probeConcurrency != null ? probeConcurrency : probe.integer("concurrency", 64, 1, 100_000),
                    backoffInitial != null ? backoffInitial
                            : probe.positiveDuration("backoff.initial", Duration.ofMillis(250)),
                    backoffMax != null ? backoffMax : probe.positiveDuration("backoff.max", Duration.ofSeconds(30)),
                    refreshInterval != null ? refreshInterval
                            : probe.positiveDuration("refresh-interval", Duration.ofMinutes(10)),
                    keepChannels != null ? keepChannels : probe.bool("keep-channels", true),
                    maxResponseBytes != null ? maxResponseBytes
                            : probe.integer("max-response-bytes", 1 << 20, 1024, 64 << 20));
            if (options.backoffMax().compareTo(options.backoffInitial()) < 0) {
                throw ConfigurationException.invalid(probe.fullKey("backoff.max"), options.backoffMax().toString(),
                        "at least rollcall.probe.backoff.initial (" + options.backoffInitial() + ")");
            }
            ProbeTls tls = ProbeTls.read(probe, tlsCa, tlsCert, tlsKey, tlsAuthority);
            Settings schemaSettings = root.scope("rollcall.schemas.");
            SchemaOptions schemaOptions = new SchemaOptions(
                    fetchSchemas != null ? fetchSchemas : schemaSettings.bool("fetch", true),
                    schemaSettings.integer("max-response-bytes", 4 << 20, 1024, 256 << 20),
                    keyPaths != null ? keyPaths : keyPaths(cfg));
            ClassLoader loader = classLoader != null ? classLoader : Thread.currentThread().getContextClassLoader();

            String policyType = null;
            VersionPolicy chosenPolicy = policy;
            if (chosenPolicy == null) {
                policyType = root.raw("rollcall.policy.type").orElseThrow(() -> ConfigurationException.missing(
                        "rollcall.policy.type", "a version policy type; found: "
                                + ProviderLookup.all(VersionPolicyProvider.class, VersionPolicyProvider::type, loader)
                                .keySet()));
                VersionPolicyProvider provider = ProviderLookup.find(VersionPolicyProvider.class,
                        VersionPolicyProvider::type, "rollcall.policy.type", policyType, "version policy", loader);
                chosenPolicy = Objects.requireNonNull(
                        provider.create(root.scope("rollcall.policy." + policyType + ".")),
                        () -> provider.getClass().getName() + " created a null policy");
            }
            String discoveryType = null;
            WorkerDiscovery chosenDiscovery = discovery;
            if (chosenDiscovery == null) {
                discoveryType = root.raw("rollcall.discovery.type").orElseThrow(() -> ConfigurationException.missing(
                        "rollcall.discovery.type", "a discovery type; found: "
                                + ProviderLookup.all(WorkerDiscoveryProvider.class, WorkerDiscoveryProvider::type,
                                loader).keySet()));
                WorkerDiscoveryProvider provider = ProviderLookup.find(WorkerDiscoveryProvider.class,
                        WorkerDiscoveryProvider::type, "rollcall.discovery.type", discoveryType, "discovery", loader);
                chosenDiscovery = Objects.requireNonNull(
                        provider.create(root.scope("rollcall.discovery." + discoveryType + ".")),
                        () -> provider.getClass().getName() + " created a null discovery");
            }
            try {
                UnknownKeys.checkResolver(cfg, discoveryType, policyType);
            } catch (ConfigurationException e) {
                if (discovery == null) {
                    chosenDiscovery.close();
                }
                throw e;
            }
            WorkerResolver resolver = new WorkerResolver(this, chosenDiscovery, chosenPolicy, options, tls,
                    schemaOptions);
            try {
                resolver.start();
            } catch (RuntimeException e) {
                resolver.close();
                throw e;
            }
            return resolver;
        }

        /** {@code rollcall.keys.<service>.<method>=<path>}, each checked for syntax, naming its key. */
        private static dev.rollcall.api.registry.KeyPaths keyPaths(RollcallConfig cfg) {
            String prefix = "rollcall.keys.";
            java.util.Map<String, String> byMethod = new java.util.TreeMap<>();
            for (String key : cfg.values().keySet()) {
                if (key.startsWith(prefix)) {
                    String value = cfg.settings().raw(key).orElse("");
                    try {
                        dev.rollcall.api.registry.KeyPaths.of(java.util.Map.of(key.substring(prefix.length()), value));
                    } catch (IllegalArgumentException e) {
                        throw ConfigurationException.invalid(key, value,
                                "a field path such as order.customer_id under rollcall.keys.<service>.<method> ("
                                        + e.getMessage() + ")");
                    }
                    byMethod.put(key.substring(prefix.length()), value);
                }
            }
            return dev.rollcall.api.registry.KeyPaths.of(byMethod);
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException(what + " " + d + " is not positive");
            }
            return d;
        }
    }
}
