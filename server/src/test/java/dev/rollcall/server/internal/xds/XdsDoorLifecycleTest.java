package dev.rollcall.server.internal.xds;

import static dev.rollcall.server.xds.AdsClient.CDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.server.xds.AdsClient;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.faults.FaultProxy;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * However an ADS stream ends (the client cancels, half-closes, or its connection is reset), the
 * door lets go of it: its place under the stream limits and the state kept beside the library's.
 */
class XdsDoorLifecycleTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void streamsEndedByCancelHalfCloseOrConnectionResetLeaveNoStateBehind() throws Exception {
        PushDiscovery discovery = new PushDiscovery("xds-lifecycle");
        discovery.push(List.of());
        List<ManagedChannel> channels = new ArrayList<>();
        try (WorkerResolver resolver = WorkerResolver.builder().name("xds-lifecycle").discovery(discovery)
                .policy(w -> Verdict.accept()).fetchSchemas(false).build();
             XdsDoor door = XdsDoor.open(resolver, RollcallConfig.of(Map.of()).settings(), "lifecycle",
                     call -> call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR))) {
            Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(door.definition()).build().start();
            try (FaultProxy proxy = FaultProxy.to(server.getPort())) {
                List<AdsClient> cancelled = new ArrayList<>();
                List<AdsClient> halfClosed = new ArrayList<>();
                List<AdsClient> reset = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    cancelled.add(served(channel(channels, server.getPort())));
                    halfClosed.add(served(channel(channels, server.getPort())));
                    reset.add(served(channel(channels, proxy.port())));
                }
                assertThat(door.streams()).isEqualTo(30);
                assertThat(door.libraryStreams()).isEqualTo(30);

                cancelled.forEach(AdsClient::cancel);
                halfClosed.forEach(AdsClient::halfClose);
                proxy.resetConnections();
                for (AdsClient c : halfClosed) {
                    assertThat(c.awaitEnd().getCode()).isEqualTo(Status.Code.OK);
                }
                for (AdsClient c : reset) {
                    assertThat(c.awaitEnd().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                }
                await().atMost(WAIT).untilAsserted(() -> {
                    assertThat(door.streams()).as("places under the limits").isZero();
                    assertThat(door.libraryStreams()).as("streams the door keeps state for").isZero();
                });
            } finally {
                for (ManagedChannel c : channels) {
                    c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                }
                server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    private static ManagedChannel channel(List<ManagedChannel> channels, int port) {
        ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        channels.add(c);
        return c;
    }

    /** A stream that has had its first answer. */
    private static AdsClient served(ManagedChannel channel) throws InterruptedException {
        AdsClient ads = AdsClient.open(channel);
        ads.subscribe(CDS, "fleet");
        ads.next(CDS);
        return ads;
    }
}
