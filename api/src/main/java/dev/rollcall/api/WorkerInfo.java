package dev.rollcall.api;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a worker said about itself when it was probed ({@code rollcall.v1.WorkerService/WorkerInfo}).
 *
 * <p>Immutable and thread-safe. Rollcall never interprets {@link #version()}: a
 * {@code VersionPolicy} does.
 *
 * @param endpoint   where the worker was reached
 * @param version    the user-defined version; {@code ""} when the worker did not set one
 * @param instanceId new on every process start; a change means the worker restarted in place
 * @param labels     facts the worker reported about itself
 * @param services   what the worker serves
 * @param capabilities what the worker says it can do ({@link Requirements} select by them);
 *                     {@link Capabilities#none()} for a worker from before capabilities
 */
public record WorkerInfo(WorkerEndpoint endpoint, String version, String instanceId,
                         Map<String, String> labels, List<ServiceInfo> services, Capabilities capabilities) {

    /**
     * How the empty version (a worker that never set one) is shown to people, wherever versions are
     * shown: tables, the console, reasons. Not a version: policies see {@code ""}.
     */
    public static final String NO_VERSION = "(no version)";

    public WorkerInfo {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(instanceId, "instanceId");
        labels = Map.copyOf(labels);
        services = List.copyOf(services);
        Objects.requireNonNull(capabilities, "capabilities");
    }

    /** A worker without capabilities (as before them). */
    public WorkerInfo(WorkerEndpoint endpoint, String version, String instanceId, Map<String, String> labels,
                      List<ServiceInfo> services) {
        this(endpoint, version, instanceId, labels, services, Capabilities.none());
    }

    /** A worker with a version and nothing else: handy in policy tests. */
    public static WorkerInfo of(WorkerEndpoint endpoint, String version) {
        return new WorkerInfo(endpoint, version, "", Map.of(), List.of(), Capabilities.none());
    }

    @Override
    public String toString() {
        return endpoint.url() + " version='" + version + "' instance=" + instanceId;
    }
}
