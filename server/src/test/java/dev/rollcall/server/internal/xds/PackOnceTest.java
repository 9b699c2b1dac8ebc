package dev.rollcall.server.internal.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import io.envoyproxy.controlplane.cache.Resources.ApiVersion;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import org.junit.jupiter.api.Test;

class PackOnceTest {

    private final PackOnce packer = new PackOnce();

    @Test
    void theLatestResourceOfATypeIsPackedOnceForEveryClient() throws Exception {
        ClusterLoadAssignment first = ClusterLoadAssignment.newBuilder().setClusterName("fleet").build();
        Listener listener = Listener.newBuilder().setName("fleet").build();
        Any packed = packer.serialize(first, ApiVersion.V3);
        Any listenerPacked = packer.serialize(listener, ApiVersion.V3);

        assertThat(packer.serialize(first, ApiVersion.V3)).isSameAs(packed);
        assertThat(packed.unpack(ClusterLoadAssignment.class)).isEqualTo(first);
        // A newer assignment replaces the older one's slot only: the listener stays packed.
        ClusterLoadAssignment second = first.toBuilder().setClusterName("fleet-2").build();
        Any secondPacked = packer.serialize(second, ApiVersion.V3);
        assertThat(secondPacked.unpack(ClusterLoadAssignment.class)).isEqualTo(second);
        assertThat(packer.serialize(listener, ApiVersion.V3)).isSameAs(listenerPacked);
        // An older one (a client answered a snapshot behind) is packed again, with its own bytes.
        Any again = packer.serialize(first, ApiVersion.V3);
        assertThat(again).isNotSameAs(packed).isEqualTo(packed);
    }
}
