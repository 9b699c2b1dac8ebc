package dev.rollcall.core.worker;

import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.core.internal.WireFormat;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.BindableService;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.UUID;

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
 * time and push it to every watching coordinator at once; a coordinator that reads slowly gets the
 * latest answer when it is ready, not every one in between. Answering is a constant reply between
 * changes. Each instance has its own random {@link #instanceId()}, so build one per process start:
 * that is how coordinators notice a worker that restarted in place on the same address.
 */
public final class WorkerInfoService implements BindableService {

    private final String version;
    private final String instanceId;
    private final ServerServiceDefinition definition;
    private final Set<Watcher> watchers = ConcurrentHashMap.newKeySet();
    // Guarded by this: what the answer is made of; the answer itself is published through the volatile.
    private Map<String, String> labels;
    private List<ServiceInfo> services;
    private ServingState state;
    private volatile WorkerInfoResponse response;

    private WorkerInfoService(String version, String instanceId, Map<String, String> labels,
                              List<ServiceInfo> services, ServingState state) {
        this.version = version;
        this.instanceId = instanceId;
        this.labels = Map.copyOf(labels);
        this.services = List.copyOf(services);
        this.state = state;
        this.response = answer();
        this.definition = new WorkerServiceGrpc.WorkerServiceImplBase() {
            @Override
            public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
                observer.onNext(response);
                observer.onCompleted();
            }

            @Override
            public void watchWorkerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
                Watcher w = new Watcher((ServerCallStreamObserver<WorkerInfoResponse>) observer);
                watchers.add(w);
                w.call.setOnCancelHandler(() -> watchers.remove(w));
                w.call.setOnReadyHandler(w::flush);
                w.offer(response);
            }
        }.bindService();
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

    /** Says from now on whether the worker takes new work, and tells every watching coordinator. */
    public void state(ServingState newState) {
        Objects.requireNonNull(newState, "state");
        synchronized (this) {
            if (state == newState) {
                return;
            }
            state = newState;
            response = answer();
        }
        push();
    }

    /** Replaces the labels, and tells every watching coordinator. */
    public void labels(Map<String, String> newLabels) {
        synchronized (this) {
            labels = Map.copyOf(newLabels);
            response = answer();
        }
        push();
    }

    /** Replaces the services advertised, and tells every watching coordinator. */
    public void services(List<ServiceInfo> newServices) {
        synchronized (this) {
            services = List.copyOf(newServices);
            response = answer();
        }
        push();
    }

    /** How many coordinators watch this worker now. */
    public int watchers() {
        return watchers.size();
    }

    /** Ends every watch (they see the stream complete), e.g. just before the server stops. */
    public void endWatches() {
        for (Watcher w : watchers) {
            watchers.remove(w);
            w.complete();
        }
    }

    private WorkerInfoResponse answer() {
        return WireFormat.toResponse(version, instanceId, labels, services).toBuilder()
                .setState(WireFormat.toWire(state)).build();
    }

    private void push() {
        WorkerInfoResponse now = response;
        watchers.forEach(w -> w.offer(now));
    }

    /** What a coordinator learns from this service about the worker at {@code endpoint}. */
    public WorkerInfo describe(WorkerEndpoint endpoint) {
        return WireFormat.toWorkerInfo(endpoint, response);
    }

    @Override
    public ServerServiceDefinition bindService() {
        return definition;
    }

    /** One watching coordinator: only the latest answer waits to be sent, sent when the call is ready. */
    private static final class Watcher {
        final ServerCallStreamObserver<WorkerInfoResponse> call;
        private final AtomicReference<WorkerInfoResponse> latest = new AtomicReference<>();
        private boolean done; // guarded by this

        Watcher(ServerCallStreamObserver<WorkerInfoResponse> call) {
            this.call = call;
        }

        void offer(WorkerInfoResponse answer) {
            latest.set(answer);
            flush();
        }

        synchronized void flush() {
            while (!done && call.isReady()) {
                WorkerInfoResponse next = latest.getAndSet(null);
                if (next == null) {
                    return;
                }
                try {
                    call.onNext(next);
                } catch (RuntimeException cancelled) {
                    done = true;
                }
            }
        }

        synchronized void complete() {
            if (!done) {
                done = true;
                try {
                    call.onCompleted();
                } catch (RuntimeException cancelled) {
                    // the coordinator went away first
                }
            }
        }
    }

    /** Collects what the worker advertises. Not thread-safe; {@link #build()} copies everything. */
    public static final class Builder {
        private String version = "";
        private String instanceId;
        private final Map<String, String> labels = new LinkedHashMap<>();
        private final List<ServiceInfo> services = new ArrayList<>();
        private ServingState state = ServingState.SERVING;

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

        /** The state it starts in; default {@link ServingState#SERVING}. */
        public Builder state(ServingState initial) {
            this.state = Objects.requireNonNull(initial, "state");
            return this;
        }

        public WorkerInfoService build() {
            String id = instanceId != null ? instanceId : UUID.randomUUID().toString();
            return new WorkerInfoService(version, id, labels, services, state);
        }
    }
}
