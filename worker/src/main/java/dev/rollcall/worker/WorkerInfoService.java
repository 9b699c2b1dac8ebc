package dev.rollcall.worker;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.Scheduler;
import dev.rollcall.api.Ticker;
import dev.rollcall.protocol.internal.WireFormat;
import io.grpc.BindableService;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Executor;

/**
 * The {@code rollcall.v1.WorkerService}: tells coordinators this worker's version, instance id,
 * labels, services and whether it takes new work ({@link ServingState}), once
 * ({@code WorkerInfo}) or as a stream that repeats the answer on every change
 * ({@code WatchWorkerInfo}). Add it to your own gRPC server next to your other services:
 *
 * <pre>{@code
 * server = ServerBuilder.forPort(7001)
 *     .addService(flightService)
 *     .addService(WorkerInfoService.builder().version("1.4.0").build())
 *     .build().start();
 * }</pre>
 *
 * <p>Thread-safe. {@link #state}, {@link #labels} and {@link #services} change the answer at run
 * time and return at once; the new answer is pushed to every watching coordinator from another
 * thread (one per process, shared by every service: {@code rollcall-worker-push-N}), so a change
 * costs its caller the same with one watcher or thousands. A coordinator that reads slowly gets the
 * latest answer when it is ready, not every one in between. Answering is a constant reply between
 * changes. Each instance has its own random {@link #instanceId()}, so build one per process start:
 * that is how coordinators notice a worker that restarted in place on the same address.
 *
 * <p><b>Revisions.</b> Every distinct answer carries a {@code revision} that grows with every change
 * (unary answers too), and a stream never sends an answer older than one it sent: a coordinator
 * that keeps the highest revision per instance can drop an answer that was overtaken on its way.
 *
 * <p><b>Heartbeats.</b> A {@code WatchWorkerInfo} request asking {@code heartbeat_millis} gets the
 * current answer again (same revision) before the stream has been silent for that long (up to
 * 100 ms early; not while the coordinator does not read), so that its coordinator tells a silent
 * host from a quiet one. The interval is clamped to
 * [{@value #MIN_HEARTBEAT_MILLIS} ms, {@value #MAX_HEARTBEAT_MILLIS} ms], and each answer on the
 * stream says what was granted in its own {@code heartbeat_millis} (0 when none was asked). One
 * timer serves all streams of a service, and it fires on the wall clock's ticks (multiples of
 * 50 ms): the workers of a host, and with clocks in sync those of a fleet, send their heartbeats
 * at the same instants, so that a coordinator reads many in one wake-up. A step of the wall clock
 * moves the ticks and delays no heartbeat past its interval.
 *
 * <p><b>Limits.</b> At most {@link Builder#maxWatches} streams in all and
 * {@link Builder#maxWatchesPerConnection} per connection; a stream past either is refused with
 * {@code RESOURCE_EXHAUSTED} naming the limit and its key.
 *
 * <p><b>Holders (exact drain).</b> A {@code WatchWorkerInfo} request with a {@code holder_id}
 * (1 to 64 printable ASCII characters, else {@code INVALID_ARGUMENT}) opens a stream that holds
 * the worker: while it is {@link ServingState#DRAINING}, {@link #holding()} counts such streams until
 * their coordinator sends {@code ReleaseWorker} or the stream ends, and every answer says that
 * count ({@code holders}; a change of it is a new revision, pushed). A {@code ReleaseWorker} for
 * another {@code instance_id} is refused with {@code FAILED_PRECONDITION} and changes nothing; one
 * whose {@code holder_id} holds nothing here (no stream of it open, not released in this drain) is
 * refused with {@code NOT_FOUND} and leaves no trace, so that only who watches as a holder can
 * release as one, and strangers' releases cannot crowd out a coordinator's. No log line or error
 * holds a holder id whole: it is the coordinator's secret for this worker, shown by its first
 * characters. Streams without a holder id watch as before.
 */
public final class WorkerInfoService implements BindableService {

    /** The shortest heartbeat a stream is granted; a shorter one asked is raised to it. */
    public static final int MIN_HEARTBEAT_MILLIS = 1_000;
    /** The longest heartbeat a stream is granted; a longer one asked is lowered to it. */
    public static final int MAX_HEARTBEAT_MILLIS = 60_000;
    /** Default of {@link Builder#maxWatches}. */
    public static final int DEFAULT_MAX_WATCHES = 1024;
    /** Default of {@link Builder#maxWatchesPerConnection}. */
    public static final int DEFAULT_MAX_WATCHES_PER_CONNECTION = 16;

    private final String version;
    private final String instanceId;
    private final ServerServiceDefinition definition;
    private final WatchStreams streams;
    private final WatchLimit limit;
    private final Runnable holdersChanged;
    private final Holders holders; // guarded by this
    // Guarded by this: what the answer is made of; the answer itself is published through the volatile,
    // chosen and stamped with its revision under the lock, so that revisions follow the changes' order.
    private Map<String, String> labels;
    private List<ServiceInfo> services;
    private Capabilities capabilities;
    private ServingState state;
    private volatile Answer answer;

    private WorkerInfoService(Builder b, String instanceId) {
        this.version = b.version;
        this.instanceId = instanceId;
        this.labels = Map.copyOf(b.labels);
        this.services = List.copyOf(b.services);
        this.capabilities = b.capabilities;
        this.state = b.state;
        this.holders = new Holders(b.maxWatches);
        this.holdersChanged = b.holdersChanged;
        this.answer = answer();
        this.streams = new WatchStreams(() -> answer, b.executor, b.scheduler, b.ticker, b.wallClock);
        this.limit = new WatchLimit(b.maxWatches, b.maxWatchesPerConnection);
        ServerServiceDefinition own = new WorkerServiceCalls(this, streams, holdersChanged).bindService();
        this.definition = ServerInterceptors.intercept(own, limit);
    }

    /** The heartbeat a stream gets for asking {@code askedMillis} (a uint32 on the wire): 0 for none, else clamped. */
    static int grantedHeartbeat(long askedMillis) {
        if (askedMillis <= 0) {
            return 0;
        }
        return (int) Math.min(MAX_HEARTBEAT_MILLIS, Math.max(MIN_HEARTBEAT_MILLIS, askedMillis));
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The version this service reports; {@code ""} when none was set. */
    public String version() {
        return version;
    }

    /** The random id of this process start. */
    public String instanceId() {
        return instanceId;
    }

    /** Whether it says it takes new work. */
    public synchronized ServingState state() {
        return state;
    }

    /**
     * Says from now on whether the worker takes new work, and tells every watching coordinator.
     * Entering {@link ServingState#DRAINING} starts a drain with every holder holding; leaving it
     * forgets the releases (a coordinator that publishes the worker again holds it again).
     */
    public void state(ServingState newState) {
        Objects.requireNonNull(newState, "state");
        synchronized (this) {
            if (state == newState) {
                return;
            }
            if (newState == ServingState.DRAINING) {
                holders.drainStarted(streams.ticker().read());
            } else if (state == ServingState.DRAINING) {
                holders.drainEnded();
            }
            state = newState;
            answer = answer();
        }
        streams.push();
        holdersChanged.run();
    }

    /** Replaces the labels, and tells every watching coordinator. */
    public void labels(Map<String, String> newLabels) {
        synchronized (this) {
            labels = Map.copyOf(newLabels);
            answer = answer();
        }
        streams.push();
    }

    /** Replaces what the worker says it can do, and tells every watching coordinator. */
    public void capabilities(Capabilities newCapabilities) {
        Objects.requireNonNull(newCapabilities, "capabilities");
        synchronized (this) {
            if (capabilities.equals(newCapabilities)) {
                return;
            }
            capabilities = newCapabilities;
            answer = answer();
        }
        streams.push();
    }

    /** What the worker says it can do now. */
    public synchronized Capabilities capabilities() {
        return capabilities;
    }

    /** Replaces the services advertised, and tells every watching coordinator. */
    public void services(List<ServiceInfo> newServices) {
        synchronized (this) {
            services = List.copyOf(newServices);
            answer = answer();
        }
        streams.push();
    }

    /** How many coordinators watch this worker now. */
    public int watchers() {
        return streams.size();
    }

    /**
     * Ends every watch, e.g. just before the server stops: each stream gets the current answer if it
     * has not had it yet, then completes. Runs on the caller's thread and returns when every stream
     * was told.
     */
    public void endWatches() {
        streams.endAll();
        synchronized (this) {
            holders.clear();
        }
        holdersChanged.run();
    }

    /**
     * Streams that hold this worker now (exact drain): opened with a {@code holder_id}, not ended,
     * and, while it drains, not released by their coordinator.
     */
    public synchronized int holding() {
        return holders.holding();
    }

    /** Watch streams opened with a holder id, released or not. */
    synchronized int holderStreams() {
        return holders.streams();
    }

    /** Who holds this worker now, each {@code 'holder id' from peer}, escaped. */
    synchronized List<String> stillHolding() {
        return holders.stillHolding();
    }

    /** What ended each hold during this drain and when, for the close's log line. */
    synchronized String holdEnds() {
        return holders.ends();
    }

    /** What a {@code ReleaseWorker} did: its outcome, and the holders left as the answers say them. */
    record Released(Holders.Release outcome, int left) {
    }

    /** Releases the hold of {@code holderId} (the instance id was checked); a changed answer is not pushed yet. */
    synchronized Released release(String holderId) {
        Holders.Release outcome = holders.release(holderId, streams.ticker().read());
        if (outcome == Holders.Release.CHANGED) {
            answer = answer();
        }
        return new Released(outcome, state == ServingState.DRAINING ? holders.holding() : 0);
    }

    /** The answer now: one volatile read. */
    Answer current() {
        return answer;
    }

    /** Returns whether the answer changed (a holder opened while draining). */
    synchronized boolean holderOpened(WatchStream w, String holder, SocketAddress peer) {
        holders.open(w, holder, peer == null ? "an unknown address" : peer.toString(), streams.ticker().read());
        if (state != ServingState.DRAINING) {
            return false;
        }
        answer = answer();
        return true;
    }

    /** The stream {@code w} of a holder ended: a draining worker's answer changes, and is pushed. */
    void holderEnded(WatchStream w) {
        synchronized (this) {
            if (!holders.end(w, streams.ticker().read()) || state != ServingState.DRAINING) {
                return;
            }
            answer = answer();
        }
        streams.push();
        holdersChanged.run();
    }

    /** Watch streams counted against the limits now: {@link #watchers()} and those whose request is still to come. */
    int watchesHeld() {
        return limit.held();
    }

    /** The revision of the current answer. */
    long revision() {
        return answer.revision();
    }

    /** Whether the heartbeat timer is set (tests: one timer for all streams). */
    boolean heartbeatTimerSet() {
        return streams.sweepSet();
    }

    /** Guarded by this. */
    private Answer answer() {
        return Answer.stamp(WireFormat.toResponse(version, instanceId, labels, services, capabilities).toBuilder()
                .setState(WireFormat.toWire(state))
                .setHolders(state == ServingState.DRAINING ? holders.holding() : 0).build());
    }

    /** What a coordinator learns from this service about the worker at {@code endpoint}. */
    public WorkerInfo describe(WorkerEndpoint endpoint) {
        return WireFormat.toWorkerInfo(endpoint, answer.unary());
    }

    @Override
    public ServerServiceDefinition bindService() {
        return definition;
    }

    /** Collects what the worker advertises. Not thread-safe; {@link #build()} copies everything. */
    public static final class Builder {
        private String version = "";
        private String instanceId;
        private final Map<String, String> labels = new LinkedHashMap<>();
        private final List<ServiceInfo> services = new ArrayList<>();
        private Capabilities capabilities = Capabilities.none();
        private ServingState state = ServingState.SERVING;
        private int maxWatches = DEFAULT_MAX_WATCHES;
        private int maxWatchesPerConnection = DEFAULT_MAX_WATCHES_PER_CONNECTION;
        private Executor executor = PushThread.shared();
        private Scheduler scheduler = Scheduler.forScheduledExecutorService(PushThread.shared());
        private Ticker ticker = Ticker.systemTicker();
        private Ticker wallClock = () -> System.currentTimeMillis() * 1_000_000L;
        private Runnable holdersChanged = () -> { };

        private Builder() {
        }

        /** The user-defined version, e.g. {@code 1.4.0}; default {@code ""}. Rollcall never interprets it. */
        public Builder version(String version) {
            this.version = Objects.requireNonNull(version, "version");
            return this;
        }

        /** Overrides the random instance id, e.g. with an id your platform already assigns per start. */
        public Builder instanceId(String instanceId) {
            this.instanceId = Objects.requireNonNull(instanceId, "instanceId");
            return this;
        }

        /** A fact about this worker (zone, engine version). */
        public Builder label(String key, String value) {
            labels.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** Several labels at once. */
        public Builder labels(Map<String, String> more) {
            more.forEach(this::label);
            return this;
        }

        /** A service this worker serves. */
        public Builder service(ServiceInfo service) {
            services.add(Objects.requireNonNull(service, "service"));
            return this;
        }

        /** What the worker can do (see {@link Capabilities}); default none. */
        public Builder capabilities(Capabilities all) {
            this.capabilities = Objects.requireNonNull(all, "capabilities");
            return this;
        }

        /** The state it starts in; default {@link ServingState#SERVING}. */
        public Builder state(ServingState initial) {
            this.state = Objects.requireNonNull(initial, "state");
            return this;
        }

        /**
         * The most {@code WatchWorkerInfo} streams served at once, from all coordinators
         * ({@code rollcall.worker.max-watches} on a {@link RollcallWorker}); default
         * {@value WorkerInfoService#DEFAULT_MAX_WATCHES}. A stream past it is refused with
         * {@code RESOURCE_EXHAUSTED}; unary {@code WorkerInfo} calls are still answered.
         */
        public Builder maxWatches(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("maxWatches " + max + " is below 1");
            }
            this.maxWatches = max;
            return this;
        }

        /**
         * The most {@code WatchWorkerInfo} streams served at once over one connection (its client's
         * address and port; {@code rollcall.worker.max-watches-per-connection} on a
         * {@link RollcallWorker}); default {@value WorkerInfoService#DEFAULT_MAX_WATCHES_PER_CONNECTION}.
         * A coordinator watches over one stream per connection (two for a moment while it re-watches).
         */
        public Builder maxWatchesPerConnection(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("maxWatchesPerConnection " + max + " is below 1");
            }
            this.maxWatchesPerConnection = max;
            return this;
        }

        /**
         * For tests: where pushes and heartbeats are sent from, the timer of the heartbeats and its
         * clock, instead of the shared push thread and {@link System#nanoTime()}; the heartbeats'
         * ticks are then on {@code clock} too (see {@link #wallClock}).
         */
        Builder time(Executor pushes, Scheduler timer, Ticker clock) {
            this.executor = Objects.requireNonNull(pushes, "pushes");
            this.scheduler = Objects.requireNonNull(timer, "timer");
            this.ticker = Objects.requireNonNull(clock, "clock");
            this.wallClock = clock;
            return this;
        }

        /**
         * For tests: the clock (nanoseconds) whose ticks the heartbeat sweeps run on, instead of the
         * wall clock ({@link System#currentTimeMillis()}).
         */
        Builder wallClock(Ticker wall) {
            this.wallClock = Objects.requireNonNull(wall, "wall");
            return this;
        }

        /** Run (without the service's lock) after what {@link #holding()} answers may have changed. */
        Builder holdersChanged(Runnable listener) {
            this.holdersChanged = Objects.requireNonNull(listener, "listener");
            return this;
        }

        public WorkerInfoService build() {
            String id = instanceId != null ? instanceId : UUID.randomUUID().toString();
            return new WorkerInfoService(this, id);
        }
    }
}
