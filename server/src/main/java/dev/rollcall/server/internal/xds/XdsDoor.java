package dev.rollcall.server.internal.xds;

import dev.rollcall.api.Settings;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.SnapshotListener;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.protocol.internal.StreamLimit;
import dev.rollcall.server.internal.catalog.ServeKeys;
import io.envoyproxy.controlplane.server.DefaultExecutorGroup;
import io.envoyproxy.controlplane.server.V3DiscoveryServer;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.grpc.ServerCall;
import io.grpc.ServerInterceptors;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The xDS door of a fleet server: an ADS service (state of the world; Envoy's java-control-plane
 * runs the protocol) that publishes this fleet's Listener, RouteConfiguration, Cluster and
 * ClusterLoadAssignment ({@link FleetResources}) under {@code rollcall.serve.xds.fleet}, one new
 * endpoints version per publish of the resolver. It shares the fleet API's port and so its TLS,
 * mutual TLS and token; its own limits are streams ({@link AdsGuard}), resource names per stream and
 * request size. Delta xDS is not served ({@code UNIMPLEMENTED}): one ClusterLoadAssignment per fleet
 * would go whole either way.
 *
 * <p>Follows the resolver on a listener thread of its own, which also writes the responses of the
 * streams each publish answers (the library's direct executor; writes never block). Thread-safe;
 * {@link #close()} stops following; the gRPC server's shutdown ends the streams.
 */
public final class XdsDoor implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(XdsDoor.class);
    /** The one method served, by full name: what the request-size bound applies to. */
    public static final String METHOD = AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod()
            .getFullMethodName();

    private final FleetResources resources;
    private final XdsCache cache;
    private final XdsStreams streams;
    private final AdsGuard guard;
    private final ServerServiceDefinition definition;
    private final SnapshotListener.Registration following;
    private volatile long published = -1;

    private XdsDoor(WorkerResolver resolver, Settings settings, String instanceId,
                    Function<ServerCall<?, ?>, Object> connectionOf) {
        this.resources = new FleetResources(settings.get(ServeKeys.XDS_FLEET), instanceId);
        this.streams = new XdsStreams(settings.get(ServeKeys.XDS_MAX_RESOURCES_PER_STREAM),
                ServeKeys.XDS_MAX_RESOURCES_PER_STREAM.name());
        this.cache = new XdsCache(streams);
        this.guard = new AdsGuard(new StreamLimit("this service", "ADS", settings.get(ServeKeys.XDS_MAX_STREAMS),
                ServeKeys.XDS_MAX_STREAMS.name(), settings.get(ServeKeys.XDS_MAX_STREAMS_PER_CONNECTION),
                ServeKeys.XDS_MAX_STREAMS_PER_CONNECTION.name()), connectionOf);
        V3DiscoveryServer server = new V3DiscoveryServer(List.of(streams), cache, new DefaultExecutorGroup(),
                new PackOnce());
        this.definition = ServerInterceptors.intercept(stateOfTheWorldOnly(
                server.getAggregatedDiscoveryServiceImpl().bindService()), guard);
        publish(resolver.pin());
        this.following = resolver.addListener(this::publish);
    }

    /**
     * The door {@code settings} describe, or null when {@code rollcall.serve.xds.enabled} is false.
     *
     * @param connectionOf the connection a call came over, for the per-connection limit
     */
    public static XdsDoor open(WorkerResolver resolver, Settings settings, String instanceId,
                               Function<ServerCall<?, ?>, Object> connectionOf) {
        if (!settings.get(ServeKeys.XDS_ENABLED)) {
            return null;
        }
        XdsDoor door = new XdsDoor(resolver, settings, instanceId, connectionOf);
        log.info("xDS (ADS) serves fleet '{}' beside the fleet API", door.resources.fleet());
        return door;
    }

    private static ServerServiceDefinition stateOfTheWorldOnly(ServerServiceDefinition full) {
        ServerMethodDefinition<?, ?> method = full.getMethod(METHOD);
        ServiceDescriptor generated = full.getServiceDescriptor();
        ServiceDescriptor descriptor = ServiceDescriptor.newBuilder(generated.getName())
                .setSchemaDescriptor(generated.getSchemaDescriptor())
                .addMethod(method.getMethodDescriptor()).build();
        return ServerServiceDefinition.builder(descriptor).addMethod(method).build();
    }

    private void publish(FleetSnapshot snapshot) {
        if (snapshot.number() <= published) {
            return;
        }
        published = snapshot.number();
        cache.publish(resources.of(snapshot));
    }

    /** The ADS service, behind its limits. */
    public ServerServiceDefinition definition() {
        return definition;
    }

    /** ADS streams open now. */
    public int streams() {
        return guard.streams();
    }

    /** Streams the library still keeps state for: 0 once every stream has ended, however it ended. */
    int libraryStreams() {
        return streams.open();
    }

    /**
     * ADS streams ended so far because their client left responses unread while it kept sending
     * requests (each request can be answered with the whole fleet).
     */
    public long slowReadersEnded() {
        return guard.slowReadersEnded();
    }

    /** NACKs received so far (each logged once per stream and version). */
    public long nacks() {
        return streams.nacks();
    }

    /** The fleet's xDS name. */
    public String fleet() {
        return resources.fleet();
    }

    @Override
    public void close() {
        following.close();
    }
}
