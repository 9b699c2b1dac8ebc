package dev.rollcall.grpc;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.internal.LiveResolvers;
import io.grpc.Attributes;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.StatusOr;
import io.grpc.SynchronizationContext;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One channel's view of a resolver: pushes the compatible workers of each snapshot (only those
 * offering {@code service}, when set, and meeting the target's {@code ?require=}) to the channel,
 * with the {@link VerifiedLoadBalancer} as its policy (gRPC's outlier detection beneath it when
 * {@code rollcall.calls.outlier-detection.enabled}, unless the picking policy is
 * {@code pick_first} or {@code rollcall_key_affinity}). Snapshots arrive on the resolver's listener
 * thread and are handed to the channel on its synchronization context; an unchanged address list is
 * not sent again unless its workers' capabilities changed (calls waiting for a capability are then
 * picked again).
 */
final class RollcallNameResolver extends NameResolver {

    private static final Logger log = LoggerFactory.getLogger(RollcallNameResolver.class);

    /** The resolver whose snapshots the addresses come from: what the gate verifies connections with. */
    static final Attributes.Key<LiveResolvers.Handle> FLEET = Attributes.Key.create("rollcall.fleet");
    /** The target's {@code ?require=}: the gate holds every call to them too. */
    static final Attributes.Key<Requirements> REQUIRED = Attributes.Key.create("rollcall.required");

    private final String target;
    private final String authority;
    private final RollcallNameResolverProvider.Source source;
    private final String service;
    private final Requirements required;
    private final String childPolicy;
    /** gRPC's outlier detection beneath the gate, or off. */
    private final OutlierDetection outliers;
    private final SynchronizationContext sync;
    private final Args args;
    private Listener2 listener;           // on sync
    private AutoCloseable subscription;   // on sync
    private List<EquivalentAddressGroup> sent; // the last list sent; on sync
    private List<Capabilities> sentCapabilities; // of the workers of the last list sent; on sync
    private boolean acquired;             // on sync
    private boolean shutdown;             // on sync

    RollcallNameResolver(String target, String authority, RollcallNameResolverProvider.Source source, String service,
                         Requirements required, String childPolicy, OutlierDetection outliers, Args args) {
        this.target = target;
        this.authority = authority;
        this.source = source;
        this.service = service;
        this.required = required;
        this.childPolicy = childPolicy;
        this.outliers = outliers;
        this.sync = args.getSynchronizationContext();
        this.args = args;
    }

    @Override
    public String getServiceAuthority() {
        return authority;
    }

    @Override
    public void start(Listener2 listener) {
        this.listener = listener;
        Optional<LiveResolvers.Handle> fleet;
        try {
            fleet = source.acquire();
            acquired = true;
        } catch (RuntimeException e) {
            listener.onError(Status.UNAVAILABLE.withDescription(target + ": " + source.describe()
                    + " could not be built: " + e.getMessage()).withCause(e));
            return;
        }
        if (fleet.isEmpty()) {
            listener.onError(Status.UNAVAILABLE.withDescription(target + ": " + source.describe()));
            return;
        }
        LiveResolvers.Handle handle = fleet.get();
        subscription = handle.listen(snapshot -> sync.execute(() -> update(handle, snapshot)),
                () -> sync.execute(this::resolverClosed));
    }

    private void update(LiveResolvers.Handle handle, FleetSnapshot snapshot) {
        if (shutdown) {
            return;
        }
        // The snapshot's own narrowing (its capability index), not a filter of our own: one reading of
        // requirements, and a lookup that costs what its answer costs.
        FleetSnapshot narrowed = snapshot.requiring(required);
        List<WorkerInfo> workers = service == null ? narrowed.workers() : narrowed.workersOffering(service);
        if (workers.isEmpty()) {
            List<WorkerInfo> offering = service == null ? snapshot.workers() : snapshot.workersOffering(service);
            sent = null;
            sentCapabilities = null;
            String why = offering.isEmpty() ? (service == null ? handle.whyNone(snapshot)
                    : "no compatible worker offers " + service + " (" + handle.whyNone(snapshot) + ")")
                    : lacking(offering);
            listener.onResult2(ResolutionResult.newBuilder()
                    .setAddressesOrError(StatusOr.fromStatus(Status.UNAVAILABLE.withDescription(target + ": " + why)))
                    .setAttributes(attributes(handle))
                    .setServiceConfig(serviceConfig())
                    .build());
            return;
        }
        List<EquivalentAddressGroup> groups = new ArrayList<>(workers.size());
        for (WorkerInfo w : workers) {
            Attributes attributes = Attributes.newBuilder()
                    .set(WorkerAttributes.URL, w.endpoint().url())
                    .set(WorkerAttributes.VERSION, w.version())
                    .set(WorkerAttributes.INSTANCE_ID, w.instanceId())
                    .build();
            groups.add(new EquivalentAddressGroup(new InetSocketAddress(w.endpoint().host(), w.endpoint().port()),
                    attributes));
        }
        List<Capabilities> capabilities = new ArrayList<>(workers.size());
        for (WorkerInfo w : workers) {
            capabilities.add(w.capabilities());
        }
        if (groups.equals(sent) && capabilities.equals(sentCapabilities)) {
            return;
        }
        sent = groups;
        sentCapabilities = capabilities;
        Status accepted = listener.onResult2(ResolutionResult.newBuilder()
                .setAddressesOrError(StatusOr.fromValue(groups))
                .setAttributes(attributes(handle))
                .setServiceConfig(serviceConfig())
                .build());
        if (!accepted.isOk()) {
            log.warn("{}: the channel did not accept snapshot {}: {}", target, snapshot.number(), accepted);
        }
    }

    private Attributes attributes(LiveResolvers.Handle handle) {
        return Attributes.newBuilder().set(FLEET, handle).set(REQUIRED, required).build();
    }

    /** E.g. {@code no compatible worker meets udf:geo_distance: 3 lack it (grpc://...: lacks udf:geo_distance)}. */
    private String lacking(List<WorkerInfo> offering) {
        WorkerInfo first = offering.get(0);
        String why = required.whyNotMetBy(first.capabilities()).orElse("");
        return "no compatible worker" + (service == null ? "" : " offering " + service) + " meets "
                + PeerText.escape(required.toString(), 512) + ": " + offering.size()
                + (offering.size() == 1 ? " lacks it (" : " lack it (") + first.endpoint().url() + ": "
                + PeerText.escape(why, 512) + ")";
    }

    /** The resolver closed: every call fails from now on, naming it. */
    private void resolverClosed() {
        if (!shutdown) {
            sent = null;
            sentCapabilities = null;
            listener.onError(Status.UNAVAILABLE.withDescription(target + ": the WorkerResolver behind it is closed"));
        }
    }

    private ConfigOrError serviceConfig() {
        // Only under a policy that spreads calls. Under key affinity an ejected owner's keys do not move
        // (only snapshots move them): ejection would turn an owner's partial failure into a total one.
        // pick_first sends every call to one worker, so there are never minimum-hosts workers to compare.
        boolean detect = outliers.enabled() && !KeyAffinityLoadBalancerProvider.POLICY.equals(childPolicy)
                && !"pick_first".equals(childPolicy);
        Map<String, ?> gate = detect
                ? Map.of("childPolicy", childPolicy, "outlierDetection", outliers.json())
                : Map.of("childPolicy", childPolicy);
        Map<String, ?> config = Map.of("loadBalancingConfig", List.of(Map.of(VerifiedLoadBalancerProvider.POLICY,
                gate)));
        return args.getServiceConfigParser().parseServiceConfig(config);
    }

    @Override
    public void refresh() {
        // Snapshots are pushed; there is nothing to ask for.
    }

    @Override
    public void shutdown() {
        if (shutdown) {
            return;
        }
        shutdown = true;
        if (subscription != null) {
            try {
                subscription.close();
            } catch (Exception e) {
                log.debug("{}: closing the snapshot subscription failed", target, e);
            }
        }
        if (acquired) {
            source.release();
        }
    }
}
