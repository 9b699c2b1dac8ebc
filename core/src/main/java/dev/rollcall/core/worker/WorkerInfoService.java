package dev.rollcall.core.worker;

import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.core.internal.WireFormat;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.BindableService;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * The {@code rollcall.v1.WorkerService}: tells coordinators this worker's version, instance id,
 * labels and services. Add it to your own gRPC server next to your other services:
 *
 * <pre>{@code
 * server = ServerBuilder.forPort(7001)
 *     .addService(flightService)
 *     .addService(WorkerInfoService.builder().version("1.4.0").build())
 *     .build().start();
 * }</pre>
 *
 * <p>Immutable once built and thread-safe; answering is a constant, allocation-free reply. Each
 * instance has its own random {@link #instanceId()}, so build one per process start: that is how
 * coordinators notice a worker that restarted in place on the same address.
 */
public final class WorkerInfoService implements BindableService {

    private final WorkerInfoResponse response;
    private final ServerServiceDefinition definition;

    private WorkerInfoService(WorkerInfoResponse response) {
        this.response = response;
        this.definition = new WorkerServiceGrpc.WorkerServiceImplBase() {
            @Override
            public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
                observer.onNext(WorkerInfoService.this.response);
                observer.onCompleted();
            }
        }.bindService();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The version this service reports; {@code ""} when none was set. */
    public String version() {
        return response.getVersion();
    }

    /** The random id of this process start. */
    public String instanceId() {
        return response.getInstanceId();
    }

    /** What a coordinator learns from this service about the worker at {@code endpoint}. */
    public WorkerInfo describe(WorkerEndpoint endpoint) {
        return WireFormat.toWorkerInfo(endpoint, response);
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

        public WorkerInfoService build() {
            String id = instanceId != null ? instanceId : UUID.randomUUID().toString();
            return new WorkerInfoService(WireFormat.toResponse(version, id, labels, services));
        }
    }
}
