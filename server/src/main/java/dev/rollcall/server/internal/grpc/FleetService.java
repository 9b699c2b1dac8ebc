package dev.rollcall.server.internal.grpc;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.SnapshotListener;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.protocol.internal.StreamLimit;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.GetFleetRequest;
import dev.rollcall.protocol.v1.HoldFleetRequest;
import dev.rollcall.protocol.v1.WatchFleetRequest;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCalls;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code rollcall.v1.FleetService} over one resolver. Each published snapshot is encoded once, on
 * the resolver's listener thread, whole and as a change message against the previous publish, and
 * the same bytes go to every client (the methods' responses are marshalled by {@link PreEncoded});
 * a watcher is a slot ({@link FleetWatch}), a hold a share of
 * a lease ({@link HeldSnapshots}). A request with requirements is answered with the snapshot
 * narrowed to them, encoded once per publish for every stream that asks the same
 * ({@link NarrowedFeeds}); a malformed one is refused with {@code INVALID_ARGUMENT} naming it before
 * the stream joins anything. Streams over the limits are refused with
 * {@code RESOURCE_EXHAUSTED} naming the limit's key. Thread-safe.
 */
final class FleetService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FleetService.class);

    static final MethodDescriptor<GetFleetRequest, byte[]> GET_FLEET = FleetServiceGrpc.getGetFleetMethod()
            .toBuilder(FleetServiceGrpc.getGetFleetMethod().getRequestMarshaller(), PreEncoded.MARSHALLER).build();
    static final MethodDescriptor<WatchFleetRequest, byte[]> WATCH_FLEET = FleetServiceGrpc.getWatchFleetMethod()
            .toBuilder(FleetServiceGrpc.getWatchFleetMethod().getRequestMarshaller(), PreEncoded.MARSHALLER).build();
    static final MethodDescriptor<HoldFleetRequest, byte[]> HOLD_FLEET = FleetServiceGrpc.getHoldFleetMethod()
            .toBuilder(FleetServiceGrpc.getHoldFleetMethod().getRequestMarshaller(), PreEncoded.MARSHALLER).build();

    private static final Status STOPPING = Status.UNAVAILABLE.withDescription("the fleet service is stopping");

    private final String instanceId;
    private final SnapshotEncoder encoder;
    private final AtomicReference<EncodedSnapshot> current = new AtomicReference<>();
    /** The snapshot {@link #current} encodes, as published: what requests with requirements narrow. */
    private final AtomicReference<FleetSnapshot> latest = new AtomicReference<>();
    private final NarrowedFeeds narrowed;
    private final Set<FleetWatch> watches = ConcurrentHashMap.newKeySet();
    private final Set<OpenHold> openHolds = ConcurrentHashMap.newKeySet();
    private volatile boolean stopping;
    private final StreamLimit watchLimit;
    private final StreamLimit holdLimit;
    private final HeldSnapshots held;
    private final LongAdder deliveries = new LongAdder();
    private final LongAdder skipped = new LongAdder();
    private final FleetWatch.Tally tally = new FleetWatch.Tally() {
        @Override
        public void delivered() {
            deliveries.increment();
        }

        @Override
        public void skipped() {
            skipped.increment();
        }
    };
    private final SnapshotListener.Registration following;

    /** Encodes the current snapshot and follows the resolver from now on. */
    FleetService(WorkerResolver resolver, String instanceId, StreamLimit watchLimit, StreamLimit holdLimit) {
        this.instanceId = instanceId;
        this.encoder = new SnapshotEncoder(instanceId);
        this.watchLimit = watchLimit;
        this.holdLimit = holdLimit;
        this.narrowed = new NarrowedFeeds(instanceId);
        this.held = new HeldSnapshots(resolver, this::encodingOf);
        // Before the listener's thread starts, so that the encoder's cache is handed over with it.
        FleetSnapshot first = resolver.pin();
        latest.set(first);
        current.set(encoder.encode(first));
        this.following = resolver.addListener(this::publish);
    }

    /** On the resolver's listener thread: encode once, offer to every watcher, wait for none. */
    private void publish(FleetSnapshot snapshot) {
        if (snapshot.number() <= current.get().number()) {
            return;
        }
        EncodedSnapshot encoded = encoder.encode(snapshot);
        // latest before current: a stream that reads current after joining finds latest as new.
        latest.set(snapshot);
        current.set(encoded);
        for (FleetWatch watch : watches) {
            watch.offer(encoded);
        }
        narrowed.publish(snapshot);
    }

    /**
     * {@code snapshot} (as published) narrowed to {@code requirements}, encoded: the published bytes
     * when it is the current one without requirements, else shared or its own.
     */
    private EncodedSnapshot encodingOf(FleetSnapshot snapshot, Requirements requirements) {
        if (!requirements.isEmpty()) {
            return narrowed.of(snapshot, requirements);
        }
        EncodedSnapshot now = current.get();
        return now.number() == snapshot.number() ? now : encoder.encodeAlone(snapshot);
    }

    /**
     * A request's requirements, read as {@link Requirements#of} reads them.
     *
     * @throws StatusRuntimeException {@code INVALID_ARGUMENT} naming the one that is malformed or too
     *         long (escaped by {@link Requirements}), or saying there are too many
     */
    private static Requirements requirementsOf(List<String> texts, String method) {
        try {
            return Requirements.of(texts);
        } catch (IllegalArgumentException e) {
            // The client's mistake, not the service's: a trace for whoever debugs that client.
            log.debug("refused {}: requirements: {}", method, e.getMessage());
            throw Status.INVALID_ARGUMENT.withDescription(method + "Request.requirements: " + e.getMessage())
                    .asRuntimeException();
        }
    }

    ServerServiceDefinition definition() {
        ServiceDescriptor generated = FleetServiceGrpc.getServiceDescriptor();
        ServiceDescriptor descriptor = ServiceDescriptor.newBuilder(generated.getName())
                .setSchemaDescriptor(generated.getSchemaDescriptor())
                .addMethod(GET_FLEET).addMethod(WATCH_FLEET).addMethod(HOLD_FLEET).build();
        return ServerServiceDefinition.builder(descriptor)
                .addMethod(GET_FLEET, ServerCalls.asyncUnaryCall((request, response) -> {
                    Requirements requirements;
                    try {
                        requirements = requirementsOf(request.getRequirementsList(), "GetFleet");
                    } catch (StatusRuntimeException e) {
                        response.onError(e);
                        return;
                    }
                    response.onNext(requirements.isEmpty() ? current.get().bytes()
                            : narrowed.of(latest.get(), requirements).bytes());
                    response.onCompleted();
                }))
                .addMethod(WATCH_FLEET, new WatchHandler())
                .addMethod(HOLD_FLEET, new HoldHandler())
                .build();
    }

    int watchers() {
        return watchLimit.held();
    }

    int holds() {
        return holdLimit.held();
    }

    long deliveries() {
        return deliveries.sum();
    }

    long skipped() {
        return skipped.sum();
    }

    /**
     * Stops following the resolver, ends every watch and hold with {@code UNAVAILABLE} (a status a
     * client retries, unlike the {@code CANCELLED} of a transport torn down) and lets go of every
     * held snapshot; streams that start later are refused likewise.
     */
    @Override
    public void close() {
        stopping = true;
        following.close();
        for (FleetWatch watch : watches) {
            watch.close(STOPPING);
        }
        narrowed.close(STOPPING);
        for (OpenHold hold : openHolds) {
            hold.close(STOPPING);
        }
        held.close();
    }

    /** A hold's call, closed either by its own listener or by {@link #close()}: one at a time. */
    private static final class OpenHold {
        private final ServerCall<HoldFleetRequest, byte[]> call;
        private boolean closed; // guarded by this

        OpenHold(ServerCall<HoldFleetRequest, byte[]> call) {
            this.call = call;
        }

        synchronized void answer(byte[] response) {
            if (!closed) {
                call.sendHeaders(new Metadata());
                call.sendMessage(response);
            }
        }

        synchronized void close(Status status) {
            if (!closed) {
                closed = true;
                try {
                    call.close(status, new Metadata());
                } catch (RuntimeException e) {
                    // cancelled meanwhile: the client has its status already
                }
            }
        }

        synchronized void ended() {
            closed = true;
        }
    }

    private static void closeQuietly(ServerCall<?, ?> call, Status status) {
        try {
            call.close(status, new Metadata());
        } catch (RuntimeException e) {
            // cancelled meanwhile: the client has its status already
        }
    }

    private static <Q> ServerCall.Listener<Q> refuse(ServerCall<Q, ?> call, Status status) {
        call.close(status, new Metadata());
        return new ServerCall.Listener<>() {
        };
    }

    /** WatchFleet: a slot per stream, filled by {@link #publish}, emptied when the stream is ready. */
    private final class WatchHandler implements ServerCallHandler<WatchFleetRequest, byte[]> {
        @Override
        public ServerCall.Listener<WatchFleetRequest> startCall(ServerCall<WatchFleetRequest, byte[]> call,
                                                                Metadata headers) {
            if (stopping) {
                return refuse(call, STOPPING);
            }
            Object connection = admit(call, watchLimit, "WatchFleet");
            if (connection == null) {
                return new ServerCall.Listener<>() {
                };
            }
            FleetWatch watch = new FleetWatch(call, tally);
            AtomicBoolean ended = new AtomicBoolean();
            AtomicReference<NarrowedFeeds.Feed> feed = new AtomicReference<>();
            Runnable end = () -> {
                if (ended.compareAndSet(false, true)) {
                    watches.remove(watch);
                    NarrowedFeeds.Feed followed = feed.get();
                    if (followed != null) {
                        followed.remove(watch);
                        narrowed.leave(followed);
                    }
                    watch.end();
                    watchLimit.release(connection);
                }
            };
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(WatchFleetRequest request) {
                    Requirements requirements;
                    try {
                        requirements = requirementsOf(request.getRequirementsList(), "WatchFleet");
                    } catch (StatusRuntimeException e) {
                        closeQuietly(call, e.getStatus());
                        end.run();
                        return;
                    }
                    if (request.getChangesOnly()) {
                        watch.sendChanges();
                    }
                    NarrowedFeeds.Feed followed = null;
                    if (requirements.isEmpty()) {
                        watches.add(watch);
                    } else {
                        followed = narrowed.join(requirements);
                        feed.set(followed);
                        followed.add(watch);
                    }
                    if (stopping) { // close() may have run before this watch joined
                        watch.close(STOPPING);
                        return;
                    }
                    // After joining: a publish either finds this watch or has already set current (and latest).
                    watch.offer(followed == null ? current.get() : followed.at(latest.get()));
                }

                @Override
                public void onReady() {
                    watch.drain();
                }

                @Override
                public void onCancel() {
                    end.run();
                }

                @Override
                public void onComplete() {
                    end.run();
                }
            };
        }
    }

    /**
     * HoldFleet: one answer, then silence until the client cancels or its connection goes. A
     * half-close does not end a hold: every stub half-closes a server-streaming call right after
     * its request.
     */
    private final class HoldHandler implements ServerCallHandler<HoldFleetRequest, byte[]> {
        @Override
        public ServerCall.Listener<HoldFleetRequest> startCall(ServerCall<HoldFleetRequest, byte[]> call,
                                                               Metadata headers) {
            if (stopping) {
                return refuse(call, STOPPING);
            }
            Object connection = admit(call, holdLimit, "HoldFleet");
            if (connection == null) {
                return new ServerCall.Listener<>() {
                };
            }
            AtomicBoolean ended = new AtomicBoolean();
            AtomicReference<HeldSnapshots.Held> granted = new AtomicReference<>();
            OpenHold open = new OpenHold(call);
            openHolds.add(open);
            Runnable end = () -> {
                if (ended.compareAndSet(false, true)) {
                    open.ended();
                    openHolds.remove(open);
                    HeldSnapshots.Held h = granted.getAndSet(null);
                    if (h != null) {
                        held.release(h);
                    }
                    holdLimit.release(connection);
                }
            };
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(HoldFleetRequest request) {
                    Requirements requirements;
                    try {
                        requirements = requirementsOf(request.getRequirementsList(), "HoldFleet");
                    } catch (StatusRuntimeException e) {
                        open.close(e.getStatus());
                        end.run();
                        return;
                    }
                    String asked = request.getServiceInstanceId();
                    if (!asked.isEmpty() && !asked.equals(instanceId)) {
                        open.close(Status.FAILED_PRECONDITION.withDescription("service_instance_id '"
                                + PeerText.escape(asked, 64) + "' is not this service's (" + instanceId
                                + "): snapshot numbers of another service process mean nothing here; hold 0"));
                        return;
                    }
                    HeldSnapshots.Grant grant = held.acquire(request.getNumber());
                    if (grant.refusal() != null) {
                        open.close(grant.refusal());
                        return;
                    }
                    granted.set(grant.held());
                    // The whole snapshot is held (every worker in it, for exact drain); the answer is narrowed.
                    open.answer(grant.held().response(requirements));
                }

                @Override
                public void onCancel() {
                    end.run();
                }

                @Override
                public void onComplete() {
                    end.run();
                }
            };
        }
    }

    /**
     * Takes a place for {@code call} under {@code limit}: its connection, or null when the call was
     * refused ({@code RESOURCE_EXHAUSTED} naming the limit and its key; logged, during a flood one
     * line a minute with how many there were since).
     */
    private static Object admit(ServerCall<?, ?> call, StreamLimit limit, String method) {
        Object connection = Connections.of(call);
        String refusal = limit.acquire(connection);
        if (refusal == null) {
            return connection;
        }
        long count = limit.countRefusal();
        if (count > 0) {
            log.warn("refused {} {} stream{} since the last such line; the latest from {}: {}", count, method,
                    count == 1 ? "" : "s", call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR), refusal);
        }
        call.close(Status.RESOURCE_EXHAUSTED.withDescription(refusal), new Metadata());
        return null;
    }
}
