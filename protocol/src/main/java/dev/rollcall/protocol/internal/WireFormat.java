package dev.rollcall.protocol.internal;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.Capability;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Converts between the {@code rollcall.v1} messages and the API's value types. Internal: not part
 * of Rollcall's public API, may change without notice.
 */
public final class WireFormat {

    /**
     * One string object per version text: a fleet reports a handful of versions, and every snapshot
     * build hashes and compares each worker's version (histogram, schema index, policy memo); with one
     * object per version the hash is computed once and equality is identity. Bounded, so that a
     * fleet of ever-new versions cannot grow it: past the bound, versions are simply not shared.
     */
    private static final java.util.concurrent.ConcurrentHashMap<String, String> VERSIONS =
            new java.util.concurrent.ConcurrentHashMap<>();
    private static final int MAX_SHARED_VERSIONS = 4096;

    private WireFormat() {
    }

    /** The shared object for {@code version} (see {@link #VERSIONS}). */
    static String shared(String version) {
        String known = VERSIONS.get(version);
        if (known != null) {
            return known;
        }
        if (VERSIONS.size() >= MAX_SHARED_VERSIONS) {
            return version;
        }
        known = VERSIONS.putIfAbsent(version, version);
        return known != null ? known : version;
    }

    /** What a worker reported, as the API's value type. */
    public static WorkerInfo toWorkerInfo(WorkerEndpoint endpoint, WorkerInfoResponse response) {
        List<ServiceInfo> services = new ArrayList<>(response.getServicesCount());
        for (dev.rollcall.protocol.v1.ServiceInfo s : response.getServicesList()) {
            List<HandlerInfo> handlers = new ArrayList<>(s.getHandlersCount());
            for (dev.rollcall.protocol.v1.HandlerInfo h : s.getHandlersList()) {
                handlers.add(new HandlerInfo(h.getName(),
                        h.hasVisibility() ? Optional.of(fromWire(h.getVisibility())) : Optional.empty()));
            }
            services.add(new ServiceInfo(s.getName(), fromWire(s.getVisibility()), handlers));
        }
        return new WorkerInfo(endpoint, shared(response.getVersion()), response.getInstanceId(),
                response.getLabelsMap(), services, capabilities(response));
    }

    /**
     * The capabilities a worker reported.
     *
     * @throws IllegalArgumentException when they break a bound ({@link AnswerCheck#problem} says
     *                                  which first; an answer it passed never throws)
     */
    public static Capabilities capabilities(WorkerInfoResponse response) {
        if (response.getCapabilitiesCount() == 0) {
            return Capabilities.none();
        }
        if (response.getCapabilitiesCount() > Capabilities.MAX_CAPABILITIES) {
            throw new IllegalArgumentException(response.getCapabilitiesCount() + " capabilities (at most "
                    + Capabilities.MAX_CAPABILITIES + ")");
        }
        List<Capability> list = new ArrayList<>(response.getCapabilitiesCount());
        for (dev.rollcall.protocol.v1.Capability c : response.getCapabilitiesList()) {
            list.add(new Capability(c.getName(), c.getVersion()));
        }
        return Capabilities.of(list);
    }

    /** The wire form of {@code capabilities}. */
    public static List<dev.rollcall.protocol.v1.Capability> toWire(Capabilities capabilities) {
        List<dev.rollcall.protocol.v1.Capability> wire = new ArrayList<>(capabilities.size());
        for (Capability c : capabilities.asList()) {
            wire.add(dev.rollcall.protocol.v1.Capability.newBuilder().setName(c.name()).setVersion(c.version()).build());
        }
        return wire;
    }

    /**
     * How many coordinators still hold a draining worker, as its answer says ({@code holders}, W21):
     * present only for a {@code DRAINING} answer with a revision (an answer without one is from a
     * worker older than the count; one with a revision but from before the count says 0, which no
     * answer tells apart). Unsigned on the wire: a count past {@link Integer#MAX_VALUE} reads as
     * that.
     */
    public static OptionalInt holders(WorkerInfoResponse response) {
        if (response.getState() != dev.rollcall.protocol.v1.ServingState.DRAINING || response.getRevision() == 0) {
            return OptionalInt.empty();
        }
        int h = response.getHolders();
        return OptionalInt.of(h < 0 ? Integer.MAX_VALUE : h);
    }

    /** The response a worker sends about itself. */
    public static WorkerInfoResponse toResponse(String version, String instanceId, Map<String, String> labels,
                                                List<ServiceInfo> services) {
        return toResponse(version, instanceId, labels, services, Capabilities.none());
    }

    /** The response a worker with capabilities sends about itself. */
    public static WorkerInfoResponse toResponse(String version, String instanceId, Map<String, String> labels,
                                                List<ServiceInfo> services, Capabilities capabilities) {
        WorkerInfoResponse.Builder b = WorkerInfoResponse.newBuilder()
                .setVersion(version)
                .setInstanceId(instanceId)
                .putAllLabels(labels)
                .addAllCapabilities(toWire(capabilities));
        for (ServiceInfo s : services) {
            dev.rollcall.protocol.v1.ServiceInfo.Builder sb = dev.rollcall.protocol.v1.ServiceInfo.newBuilder()
                    .setName(s.name())
                    .setVisibility(toWire(s.visibility()));
            for (HandlerInfo h : s.handlers()) {
                dev.rollcall.protocol.v1.HandlerInfo.Builder hb =
                        dev.rollcall.protocol.v1.HandlerInfo.newBuilder().setName(h.name());
                h.visibility().ifPresent(v -> hb.setVisibility(toWire(v)));
                sb.addHandlers(hb);
            }
            b.addServices(sb);
        }
        return b.build();
    }

    /**
     * What a worker says of its serving state. An unknown value from a newer worker is read the most
     * restrictive way, as not serving: the worker stays out of new snapshots (fail closed).
     */
    public static ServingState fromWire(dev.rollcall.protocol.v1.ServingState s) {
        return switch (s) {
            case SERVING -> ServingState.SERVING;
            case DRAINING -> ServingState.DRAINING;
            case NOT_SERVING, UNRECOGNIZED -> ServingState.NOT_SERVING;
        };
    }

    public static dev.rollcall.protocol.v1.ServingState toWire(ServingState s) {
        return switch (s) {
            case SERVING -> dev.rollcall.protocol.v1.ServingState.SERVING;
            case NOT_SERVING -> dev.rollcall.protocol.v1.ServingState.NOT_SERVING;
            case DRAINING -> dev.rollcall.protocol.v1.ServingState.DRAINING;
        };
    }

    /**
     * Who may call a service or handler. PUBLIC is the proto default: what an old worker means when
     * it sends nothing. A number this version does not know (a newer worker's) is {@code UNKNOWN},
     * which no caller may call: INTERNAL or EXTERNAL would each let one kind of caller in, and the
     * new value may mean neither (an internal-only handler became reachable from the ingress when
     * it was read as PUBLIC).
     */
    static Visibility fromWire(dev.rollcall.protocol.v1.Visibility v) {
        return switch (v) {
            case VISIBILITY_PUBLIC -> Visibility.PUBLIC;
            case VISIBILITY_INTERNAL -> Visibility.INTERNAL;
            case VISIBILITY_EXTERNAL -> Visibility.EXTERNAL;
            case UNRECOGNIZED -> Visibility.UNKNOWN;
        };
    }

    /** @throws IllegalArgumentException for {@code UNKNOWN}: a coordinator's reading of a value, not one a worker may declare */
    static dev.rollcall.protocol.v1.Visibility toWire(Visibility v) {
        return switch (v) {
            case PUBLIC -> dev.rollcall.protocol.v1.Visibility.VISIBILITY_PUBLIC;
            case INTERNAL -> dev.rollcall.protocol.v1.Visibility.VISIBILITY_INTERNAL;
            case EXTERNAL -> dev.rollcall.protocol.v1.Visibility.VISIBILITY_EXTERNAL;
            case UNKNOWN -> throw new IllegalArgumentException("visibility UNKNOWN is how a coordinator reads a value"
                    + " it does not know; a worker declares PUBLIC, INTERNAL or EXTERNAL");
        };
    }
}
