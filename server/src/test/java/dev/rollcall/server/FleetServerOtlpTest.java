package dev.rollcall.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.Closer;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * {@code rollcall serve}'s meters pushed over OTLP/HTTP when {@code rollcall.metrics.otlp.url} is
 * set, to a receiver stand-in (a JDK HTTP server on loopback decoding the protobuf payload).
 */
class FleetServerOtlpTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @AutoClose
    final Closer closer = new Closer();

    private final List<ExportMetricsServiceRequest> received = new CopyOnWriteArrayList<>();

    private String receiver() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v1/metrics", this::handle);
        server.start();
        closer.add(() -> server.stop(0));
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1/metrics";
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange; InputStream body = exchange.getRequestBody()) {
            received.add(ExportMetricsServiceRequest.parseFrom(body.readAllBytes()));
            exchange.sendResponseHeaders(200, -1);
        }
    }

    private static Map<String, String> attributes(List<KeyValue> list) {
        Map<String, String> map = new HashMap<>();
        list.forEach(kv -> map.put(kv.getKey(), kv.getValue().getStringValue()));
        return map;
    }

    /** The latest gauge value of {@code name} with {@code attributes}, and its resource's attributes. */
    private Optional<Map.Entry<Double, Map<String, String>>> latest(String name, Map<String, String> attributes) {
        Map.Entry<Double, Map<String, String>> found = null;
        for (ExportMetricsServiceRequest request : received) {
            for (ResourceMetrics rm : request.getResourceMetricsList()) {
                for (Metric metric : rm.getScopeMetricsList().stream().flatMap(s -> s.getMetricsList().stream())
                        .toList()) {
                    if (metric.getName().equals(name) && metric.hasGauge()) {
                        for (NumberDataPoint point : metric.getGauge().getDataPointsList()) {
                            if (attributes(point.getAttributesList()).entrySet().containsAll(attributes.entrySet())) {
                                found = Map.entry(point.getAsDouble(), attributes(rm.getResource().getAttributesList()));
                            }
                        }
                    }
                }
            }
        }
        return Optional.ofNullable(found);
    }

    @Test
    void withAnOtlpUrlTheResolversAndTheServersMetersArePushedOnAResourceNamingThisServer() throws Exception {
        WorkerFleet fleet = closer.add(WorkerFleet.start("1.4.0", "1.4.0", "2.0.0"));
        RollcallConfig config = RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", fleet.endpointList(),
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.4",
                "rollcall.serve.port", "0",
                "rollcall.serve.http-port", "0",
                "rollcall.metrics.otlp.url", receiver(),
                "rollcall.metrics.otlp.step", "1s"));
        WorkerResolver resolver = closer.add(WorkerResolver.fromConfig(config));
        FleetServer server = closer.add(FleetServer.builder(resolver).config(config).start());

        // An export may fall between the resolver's binding and the server's own: wait for one with both.
        await().atMost(WAIT).until(() -> latest("rollcall.workers", Map.of("state", "compatible"))
                .map(e -> e.getKey() == 2.0).orElse(false)
                && latest("rollcall.workers.versions", Map.of("version", "2.0.0")).isPresent()
                && latest("rollcall.serve.watchers", Map.of()).isPresent());
        Map.Entry<Double, Map<String, String>> compatible =
                latest("rollcall.workers", Map.of("state", "compatible")).orElseThrow();
        assertThat(compatible.getValue()).containsEntry("service.name", "rollcall-serve")
                .containsEntry("service.instance.id", server.instanceId())
                .containsKey("service.version");
        assertThat(compatible.getValue().get("service.version")).isNotBlank().doesNotContain("${");
        assertThat(latest("rollcall.workers.versions", Map.of("version", "1.4.0")).orElseThrow().getKey())
                .isEqualTo(2.0);
        assertThat(latest("rollcall.serve.watchers", Map.of()).orElseThrow().getValue())
                .containsEntry("service.instance.id", server.instanceId());
    }
}
