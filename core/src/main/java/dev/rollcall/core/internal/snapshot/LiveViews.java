package dev.rollcall.core.internal.snapshot;

import com.google.protobuf.Descriptors;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.Caller;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.InvocationTarget;
import dev.rollcall.api.registry.InvocationTargets;
import dev.rollcall.api.registry.KeyExtractors;
import dev.rollcall.api.registry.KeyRouting;
import dev.rollcall.api.registry.ProtoSchema;
import dev.rollcall.api.registry.ProtoSymbols;
import dev.rollcall.api.registry.WorkerEndpoints;
import dev.rollcall.api.registry.WorkerServices;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerVersions;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.function.Supplier;

/**
 * The read views over whatever snapshot is current: each call reads the current snapshot once and
 * answers from it. Read-only by construction: it holds nothing but the supplier.
 */
public final class LiveViews implements WorkerEndpoints, WorkerVersions, WorkerServices, InvocationTargets,
        ProtoSymbols, KeyExtractors,
        KeyRouting {

    private final Supplier<FleetSnapshot> current;

    public LiveViews(Supplier<FleetSnapshot> current) {
        this.current = current;
    }

    @Override
    public List<WorkerEndpoint> compatibleEndpoints() {
        return current.get().compatibleEndpoints();
    }

    @Override
    public Optional<WorkerStatus> status(String endpointId) {
        return current.get().status(endpointId);
    }

    @Override
    public List<WorkerEndpoint> latestEndpoints(String service) {
        return current.get().latestEndpoints(service);
    }

    @Override
    public List<WorkerStatus> statuses() {
        return current.get().statuses();
    }

    @Override
    public Optional<String> version(String endpointId) {
        return current.get().version(endpointId);
    }

    @Override
    public SortedMap<String, Integer> versionHistogram() {
        return current.get().versionHistogram();
    }

    @Override
    public SortedSet<String> services() {
        return current.get().services();
    }

    @Override
    public List<WorkerInfo> workersOffering(String service) {
        return current.get().workersOffering(service);
    }

    @Override
    public List<InvocationTarget> targets() {
        return current.get().targets();
    }

    @Override
    public InvocationTarget target(String service, String handler, Caller caller) {
        return current.get().target(service, handler, caller);
    }

    @Override
    public SortedSet<String> protoServices() {
        return current.get().symbols().protoServices();
    }

    @Override
    public Optional<Descriptors.FileDescriptor> fileContainingSymbol(String symbol) {
        return current.get().symbols().fileContainingSymbol(symbol);
    }

    @Override
    public Optional<Descriptors.FileDescriptor> file(String name) {
        return current.get().symbols().file(name);
    }

    @Override
    public Optional<Descriptors.MethodDescriptor> method(String service, String method) {
        return current.get().symbols().method(service, method);
    }

    @Override
    public Optional<ProtoSchema> forVersion(String version) {
        return current.get().symbols().forVersion(version);
    }

    @Override
    public Optional<ProtoSchema> forWorker(WorkerEndpoint worker) {
        return current.get().symbols().forWorker(worker);
    }

    @Override
    public Optional<String> keyPath(String service, String method) {
        return current.get().keyExtractors().keyPath(service, method);
    }

    @Override
    public String extractKey(String service, String method, byte[] request) {
        return current.get().keyExtractors().extractKey(service, method, request);
    }

    @Override
    public WorkerInfo route(String service, String method, Caller caller, String key) {
        return current.get().route(service, method, caller, key);
    }

    @Override
    public String toString() {
        return "live views of " + current.get();
    }
}
