package dev.rollcall.server.internal.xds;

import com.google.protobuf.Any;
import com.google.protobuf.UInt32Value;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.server.internal.WorkerZone;
import io.envoyproxy.controlplane.cache.SnapshotResources;
import io.envoyproxy.controlplane.cache.VersionedResource;
import io.envoyproxy.controlplane.cache.v3.Snapshot;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.core.v3.Locality;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.ApiListener;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One fleet's verdicts in xDS's terms: a Listener (a gRPC API listener), a RouteConfiguration, a
 * Cluster (EDS over ADS, round robin) and a ClusterLoadAssignment, all named after the fleet.
 * Compatible workers are {@code HEALTHY}, draining ones {@code DRAINING} (gRPC clients pick neither
 * for new calls; gRFC A55 keeps a draining one only for an override), every other candidate is
 * absent; a worker's zone ({@link WorkerZone}) is its
 * locality, weighted by its healthy endpoints so that calls spread evenly across workers.
 *
 * <p>While no worker is compatible the Cluster is withdrawn (xDS's "does not exist"), so that
 * clients fail calls rather than keep calling the endpoints they had.
 *
 * <p>Versions: the Listener, route and Cluster never change while the server runs, so their version
 * is the server's instance id (the withdrawn Cluster's is {@code no-worker/<instance id>}); the
 * ClusterLoadAssignment's is {@code <snapshot number>/<instance id>}, new with every publish, in
 * order. The instance id keeps a client that reconnects after a
 * restart from taking the new server's version N for the old one's N. A version also names the
 * requested names this fleet does not have (as a digest), so that a subscription that adds one is
 * answered at once (a Listener or Cluster absent from the answer is xDS's "does not exist").
 *
 * <p>xDS clients take IP addresses only: a worker whose host is a name is left out, with a warning
 * once per host. Stateless apart from that; thread-safe.
 */
final class FleetResources {

    private static final Logger log = LoggerFactory.getLogger(FleetResources.class);
    private static final String ROUTER_FILTER = "envoy.filters.http.router";
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    /** Hosts warned about (bounded: a fleet of names warns about its first thousand only). */
    private static final int MAX_WARNED = 1000;

    private final String fleet;
    private final String instanceId;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    private final SnapshotResources<Listener> listener;
    private final SnapshotResources<RouteConfiguration> route;
    private final SnapshotResources<Cluster> cluster;
    private final SnapshotResources<Cluster> noCluster;

    FleetResources(String fleet, String instanceId) {
        this.fleet = fleet;
        this.instanceId = instanceId;
        this.listener = resources(listener(), instanceId);
        this.route = resources(route(), instanceId);
        this.cluster = resources(cluster(), instanceId);
        String none = "no-worker/" + instanceId;
        this.noCluster = SnapshotResources.create(List.of(), names -> versionFor(none, fleet, names));
    }

    /** The name every resource of this fleet has. */
    String fleet() {
        return fleet;
    }

    /** The cache snapshot of {@code snapshot}. */
    Snapshot of(FleetSnapshot snapshot) {
        ClusterLoadAssignment endpoints = loadAssignment(snapshot);
        // gRPC clients keep balancing over their last endpoints when an update leaves them none that
        // is HEALTHY; a Cluster that does not exist makes them fail calls instead.
        boolean anyHealthy = endpoints.getEndpointsList().stream().flatMap(l -> l.getLbEndpointsList().stream())
                .anyMatch(e -> e.getHealthStatus() == HealthStatus.HEALTHY);
        return new FleetXdsSnapshot(anyHealthy ? cluster : noCluster,
                resources(endpoints, endpointsVersion(snapshot.number())), listener, route);
    }

    /** The ClusterLoadAssignment's version for snapshot {@code number}. */
    String endpointsVersion(long number) {
        return number + "/" + instanceId;
    }

    private <T extends com.google.protobuf.Message> SnapshotResources<T> resources(T resource, String version) {
        String name = fleet;
        return SnapshotResources.create(List.of(VersionedResource.create(resource, version)),
                names -> versionFor(version, name, names));
    }

    /**
     * {@code version}, plus a digest of the requested names other than {@code name}: a subscription
     * that changes which unknown names it asks for gets an answer of its own.
     */
    static String versionFor(String version, String name, List<String> requested) {
        int unknown = 0;
        int digest = 1;
        for (String r : new java.util.TreeSet<>(requested)) {
            if (!r.equals(name)) {
                unknown++;
                digest = 31 * digest + r.hashCode();
            }
        }
        return unknown == 0 ? version : version + "+" + unknown + "." + Integer.toHexString(digest);
    }

    Listener listener() {
        HttpConnectionManager manager = HttpConnectionManager.newBuilder()
                .setRds(Rds.newBuilder().setRouteConfigName(fleet).setConfigSource(ads()))
                .addHttpFilters(HttpFilter.newBuilder().setName(ROUTER_FILTER)
                        .setTypedConfig(Any.pack(Router.getDefaultInstance())))
                .build();
        return Listener.newBuilder().setName(fleet)
                .setApiListener(ApiListener.newBuilder().setApiListener(Any.pack(manager))).build();
    }

    RouteConfiguration route() {
        return RouteConfiguration.newBuilder().setName(fleet)
                .addVirtualHosts(VirtualHost.newBuilder().setName(fleet).addDomains("*")
                        .addRoutes(Route.newBuilder().setMatch(RouteMatch.newBuilder().setPrefix(""))
                                .setRoute(RouteAction.newBuilder().setCluster(fleet))))
                .build();
    }

    Cluster cluster() {
        return Cluster.newBuilder().setName(fleet)
                .setType(Cluster.DiscoveryType.EDS)
                .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setServiceName(fleet).setEdsConfig(ads()))
                .setLbPolicy(Cluster.LbPolicy.ROUND_ROBIN)
                .build();
    }

    ClusterLoadAssignment loadAssignment(FleetSnapshot snapshot) {
        Map<String, List<LbEndpoint>> byZone = new TreeMap<>();
        Map<String, Integer> healthyByZone = new TreeMap<>();
        for (WorkerStatus status : snapshot.statuses()) {
            HealthStatus health = switch (status.state()) {
                case COMPATIBLE -> HealthStatus.HEALTHY;
                case DRAINING -> HealthStatus.DRAINING;
                default -> null;
            };
            if (health == null) {
                continue;
            }
            WorkerEndpoint endpoint = status.endpoint();
            String ip = ipLiteral(endpoint.host());
            if (ip == null) {
                warnName(endpoint);
                continue;
            }
            Map<String, String> labels = endpoint.labels();
            String zone = PeerText.escape(WorkerZone.of(labels), 1024);
            byZone.computeIfAbsent(zone, z -> new ArrayList<>()).add(LbEndpoint.newBuilder()
                    .setHealthStatus(health)
                    .setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setSocketAddress(
                            SocketAddress.newBuilder().setAddress(ip).setPortValue(endpoint.port()))))
                    .build());
            healthyByZone.merge(zone, health == HealthStatus.HEALTHY ? 1 : 0, Integer::sum);
        }
        ClusterLoadAssignment.Builder cla = ClusterLoadAssignment.newBuilder().setClusterName(fleet);
        for (Map.Entry<String, List<LbEndpoint>> zone : byZone.entrySet()) {
            // gRPC ignores a locality without a weight; one per healthy worker spreads calls evenly
            // across workers (a locality of draining workers only gets 1 and no new calls).
            int weight = Math.max(1, healthyByZone.get(zone.getKey()));
            cla.addEndpoints(LocalityLbEndpoints.newBuilder()
                    .setLocality(Locality.newBuilder().setZone(zone.getKey()))
                    .setLoadBalancingWeight(UInt32Value.of(weight))
                    .addAllLbEndpoints(zone.getValue()));
        }
        return cla.build();
    }

    private static ConfigSource ads() {
        return ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance())
                .setResourceApiVersion(ApiVersion.V3).build();
    }

    /** {@code host} as an IP literal (brackets removed), or null when it is a name. */
    static String ipLiteral(String host) {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        boolean literal = h.indexOf(':') >= 0 || IPV4.matcher(h).matches();
        if (!literal) {
            return null;
        }
        try {
            return InetAddress.getByName(h).getHostAddress(); // a literal: parsed, never looked up
        } catch (java.net.UnknownHostException e) {
            return null;
        }
    }

    private void warnName(WorkerEndpoint endpoint) {
        if (warned.size() < MAX_WARNED && warned.add(endpoint.host())) {
            log.warn("xDS leaves out {}: xDS clients take IP addresses, and its host is a name",
                    PeerText.escape(endpoint.url(), 300));
        }
    }

    /** A cache snapshot of this fleet's four resources, with no secrets. */
    static final class FleetXdsSnapshot extends Snapshot {
        private final SnapshotResources<Cluster> clusters;
        private final SnapshotResources<ClusterLoadAssignment> endpoints;
        private final SnapshotResources<Listener> listeners;
        private final SnapshotResources<RouteConfiguration> routes;
        private static final SnapshotResources<io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret> NO_SECRETS =
                SnapshotResources.create(Collections.emptyList(), "");

        FleetXdsSnapshot(SnapshotResources<Cluster> clusters, SnapshotResources<ClusterLoadAssignment> endpoints,
                         SnapshotResources<Listener> listeners, SnapshotResources<RouteConfiguration> routes) {
            this.clusters = clusters;
            this.endpoints = endpoints;
            this.listeners = listeners;
            this.routes = routes;
        }

        @Override
        public SnapshotResources<Cluster> clusters() {
            return clusters;
        }

        @Override
        public SnapshotResources<ClusterLoadAssignment> endpoints() {
            return endpoints;
        }

        @Override
        public SnapshotResources<Listener> listeners() {
            return listeners;
        }

        @Override
        public SnapshotResources<RouteConfiguration> routes() {
            return routes;
        }

        @Override
        public SnapshotResources<io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret> secrets() {
            return NO_SECRETS;
        }

        /**
         * The library's own; declared again because the generic signatures of its two declarations
         * differ (VersionedResource&lt;?&gt; and &lt;? extends Message&gt;), which javac rejects in a
         * subclass compiled against the jars.
         */
        @Override
        @SuppressWarnings({"rawtypes", "unchecked"})
        public Map versionedResources(io.envoyproxy.controlplane.cache.Resources.ResourceType type) {
            return super.versionedResources(type);
        }
    }
}
