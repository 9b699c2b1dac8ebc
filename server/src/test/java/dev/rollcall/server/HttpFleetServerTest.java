package dev.rollcall.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.WatchFleetRequest;
import dev.rollcall.testkit.Closer;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * A whole {@link FleetServer}: its HTTP port beside the gRPC one, with the service's own meters
 * ({@code rollcall_serve_*}) in {@code /metrics} next to the resolver's, and both ports freed by
 * {@link FleetServer#close()}.
 */
class HttpFleetServerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @AutoClose
    final Closer closer = new Closer();

    private final WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0", "1.1.0"));
    private final WorkerResolver resolver = closer.add(WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
            "rollcall.discovery.type", "static",
            "rollcall.discovery.static.endpoints", fleet.endpointList(),
            "rollcall.policy.type", "semver",
            "rollcall.policy.semver.range", "^1.0.0"))));

    private FleetServer server() throws IOException {
        return closer.add(FleetServer.builder(resolver).config(RollcallConfig.of(Map.of())).host("127.0.0.1").port(0)
                .httpPort(0).start());
    }

    private static HttpResponse<String> get(InetSocketAddress at, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + at.getPort() + path))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void metricsCarriesTheServicesMetersBesideTheResolversAndFollowsItsWatchers() throws Exception {
        FleetServer server = server();
        InetSocketAddress http = server.httpAddress().orElseThrow();
        resolver.awaitWorkers(2, WAIT);
        ManagedChannel channel = NettyChannelBuilder.forAddress(server.grpcAddress()).usePlaintext().build();
        AtomicInteger seen = new AtomicInteger();
        try {
            FleetServiceGrpc.newStub(channel).watchFleet(WatchFleetRequest.getDefaultInstance(),
                    new StreamObserver<FleetSnapshot>() {
                        @Override
                        public void onNext(FleetSnapshot value) {
                            seen.incrementAndGet();
                        }

                        @Override
                        public void onError(Throwable t) {
                        }

                        @Override
                        public void onCompleted() {
                        }
                    });
            Awaitility.await().atMost(WAIT).until(() -> seen.get() >= 1 && server.watchers() == 1);

            HttpResponse<String> metrics = get(http, "/metrics");

            assertThat(metrics.statusCode()).isEqualTo(200);
            PrometheusText text = PrometheusText.parse(metrics.body());
            assertThat(text.value("rollcall_serve_watchers")).isEqualTo(1.0);
            assertThat(text.value("rollcall_serve_deliveries_total")).isGreaterThanOrEqualTo(1.0);
            assertThat(text.value("rollcall_workers", "resolver=\"" + resolver.name() + "\"", "state=\"compatible\""))
                    .isEqualTo(2.0);
            assertThat(get(http, "/readyz").statusCode()).isEqualTo(200);
            assertThat(get(http, "/healthz").statusCode()).isEqualTo(200);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void closingTheServerFreesTheHttpPortAndLeavesTheResolverRunning() throws Exception {
        FleetServer server = server();
        InetSocketAddress http = server.httpAddress().orElseThrow();
        assertThat(get(http, "/healthz").statusCode()).isEqualTo(200);

        server.close();

        try (Socket probe = new Socket()) {
            assertThatThrownBy(() -> probe.connect(new InetSocketAddress("127.0.0.1", http.getPort()), 5000))
                    .isInstanceOf(ConnectException.class);
        }
        assertThat(resolver.isClosed()).isFalse();
    }

    @Test
    void aServerWithoutItsHttpPortHasNoHttpAddress() throws Exception {
        FleetServer server = closer.add(FleetServer.builder(resolver).host("127.0.0.1").port(0).http(false).start());

        assertThat(server.httpAddress()).isEmpty();
    }
}
