package dev.rollcall.server.internal.xds;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import io.envoyproxy.controlplane.cache.Resources.ApiVersion;
import io.envoyproxy.controlplane.server.serializer.ProtoResourcesSerializer;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Packs each of the fleet's resources into an {@code Any} once, whatever the number of clients it
 * goes to: the latest resource of each type is kept with its packing, by identity. The library's
 * cached serializer would do the same, but its cache holds every packed resource strongly by key
 * until a collection clears the value and a later access cleans the entry, so a fleet of 10,000
 * endpoints kept several old ClusterLoadAssignments alive. A resource that is no longer the latest
 * of its type (a client answered an older snapshot) is packed again. Thread-safe: racing packers
 * of one resource produce equal bytes and the last one stays.
 */
final class PackOnce implements ProtoResourcesSerializer {

    private final AtomicReferenceArray<Packed> latest = new AtomicReferenceArray<>(4);

    @Override
    public Any serialize(Message resource, ApiVersion apiVersion) {
        int slot = slotOf(resource);
        if (slot < 0) {
            return Any.pack(resource);
        }
        Packed packed = latest.get(slot);
        if (packed != null && packed.resource == resource) {
            return packed.any;
        }
        Any any = Any.pack(resource);
        latest.set(slot, new Packed(resource, any));
        return any;
    }

    private static int slotOf(Message resource) {
        if (resource instanceof ClusterLoadAssignment) {
            return 0;
        }
        if (resource instanceof Listener) {
            return 1;
        }
        if (resource instanceof RouteConfiguration) {
            return 2;
        }
        return resource instanceof Cluster ? 3 : -1;
    }

    private record Packed(Message resource, Any any) {
    }
}
