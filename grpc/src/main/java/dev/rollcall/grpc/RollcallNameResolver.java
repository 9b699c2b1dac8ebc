package dev.rollcall.grpc;

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
 * offering {@code service}, when set) to the channel, with the {@link VerifiedLoadBalancer} as its
 * policy. Snapshots arrive on the resolver's listener thread and are handed to the channel on its
 * synchronization context; an unchanged address list is not sent again.
 */
final class RollcallNameResolver extends NameResolver {

    private static final Logger log = LoggerFactory.getLogger(RollcallNameResolver.class);

    /** The resolver whose snapshots the addresses come from: what the gate verifies connections with. */
    static final Attributes.Key<LiveResolvers.Handle> FLEET = Attributes.Key.create("rollcall.fleet");

    private final String target;
    private final String authority;
    private final RollcallNameResolverProvider.Source source;
    private final String service;
    private final String childPolicy;
    private final SynchronizationContext sync;
    private final Args args;
    private Listener2 listener;           // on sync
    private AutoCloseable subscription;   // on sync
    private List<EquivalentAddressGroup> sent; // the last list sent; on sync
    private boolean acquired;             // on sync
    private boolean shutdown;             // on sync

    RollcallNameResolver(String target, String authority, RollcallNameResolverProvider.Source source, String service,
                         String childPolicy, Args args) {
        this.target = target;
        this.authority = authority;
        this.source = source;
        this.service = service;
        this.childPolicy = childPolicy;
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
        List<WorkerInfo> workers = service == null ? snapshot.workers() : snapshot.workersOffering(service);
        if (workers.isEmpty()) {
            sent = null;
            String why = service == null ? handle.whyNone(snapshot)
                    : "no compatible worker offers " + service + " (" + handle.whyNone(snapshot) + ")";
            listener.onResult2(ResolutionResult.newBuilder()
                    .setAddressesOrError(StatusOr.fromStatus(Status.UNAVAILABLE.withDescription(target + ": " + why)))
                    .setAttributes(Attributes.newBuilder().set(FLEET, handle).build())
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
        if (groups.equals(sent)) {
            return;
        }
        sent = groups;
        Status accepted = listener.onResult2(ResolutionResult.newBuilder()
                .setAddressesOrError(StatusOr.fromValue(groups))
                .setAttributes(Attributes.newBuilder().set(FLEET, handle).build())
                .setServiceConfig(serviceConfig())
                .build());
        if (!accepted.isOk()) {
            log.warn("{}: the channel did not accept snapshot {}: {}", target, snapshot.number(), accepted);
        }
    }

    /** The resolver closed: every call fails from now on, naming it. */
    private void resolverClosed() {
        if (!shutdown) {
            sent = null;
            listener.onError(Status.UNAVAILABLE.withDescription(target + ": the WorkerResolver behind it is closed"));
        }
    }

    private ConfigOrError serviceConfig() {
        Map<String, ?> config = Map.of("loadBalancingConfig", List.of(Map.of(VerifiedLoadBalancerProvider.POLICY,
                Map.of("childPolicy", childPolicy))));
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
