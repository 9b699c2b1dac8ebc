package io.grpc.xds;

import com.google.protobuf.Message;
import io.grpc.InsecureChannelCredentials;
import io.grpc.xds.client.Bootstrapper;
import io.grpc.xds.client.XdsResourceType;
import java.util.Set;

/**
 * grpc-java's own checks of xDS resources, the ones its xDS client applies to a response before it
 * uses it (or NACKs it): {@code doParse} of each resource type, reached from this package because
 * grpc-java keeps them package-private. Takes Envoy's unshaded resources and reads them as the
 * client does, from their bytes into grpc-xds's shaded classes. For tests only.
 */
public final class GrpcJavaResourceValidation {

    private static final XdsResourceType.Args ARGS = new XdsResourceType.Args(
            Bootstrapper.ServerInfo.create("127.0.0.1:1", InsecureChannelCredentials.create()), "1", "0",
            Bootstrapper.BootstrapInfo.builder()
                    .servers(java.util.List.of(Bootstrapper.ServerInfo.create("127.0.0.1:1",
                            InsecureChannelCredentials.create())))
                    .node(io.grpc.xds.client.EnvoyProtoData.Node.newBuilder().setId("validation").build())
                    .build(),
            null, Set.of());

    private GrpcJavaResourceValidation() {
    }

    /** What grpc-java makes of a Listener; throws its ResourceInvalidException, naming the fault. */
    public static Object listener(Message listener) throws Exception {
        return XdsListenerResource.getInstance().doParse(ARGS,
                io.grpc.xds.shaded.io.envoyproxy.envoy.config.listener.v3.Listener.parseFrom(listener.toByteString()));
    }

    public static Object route(Message route) throws Exception {
        return XdsRouteConfigureResource.getInstance().doParse(ARGS,
                io.grpc.xds.shaded.io.envoyproxy.envoy.config.route.v3.RouteConfiguration.parseFrom(
                        route.toByteString()));
    }

    public static Object cluster(Message cluster) throws Exception {
        return XdsClusterResource.getInstance().doParse(ARGS,
                io.grpc.xds.shaded.io.envoyproxy.envoy.config.cluster.v3.Cluster.parseFrom(cluster.toByteString()));
    }

    public static Object endpoints(Message loadAssignment) throws Exception {
        return XdsEndpointResource.getInstance().doParse(ARGS,
                io.grpc.xds.shaded.io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.parseFrom(
                        loadAssignment.toByteString()));
    }
}
