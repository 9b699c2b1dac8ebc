package dev.rollcall.testkit.otlp;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An OTLP/HTTP metrics receiver stand-in: a JDK HTTP server on loopback that takes
 * {@code POST /v1/metrics}, decodes each {@code ExportMetricsServiceRequest} (protobuf) and answers
 * 200. For tests that point {@code rollcall.metrics.otlp.url} at {@link #url()} and look for a gauge
 * and the resource it came on. Needs {@code io.opentelemetry.proto:opentelemetry-proto} on the test
 * class path (an optional dependency of the testkit; {@code micrometer-registry-otlp} brings it at
 * run time). Thread-safe; {@link #close()} frees the port.
 */
public final class OtlpReceiver implements AutoCloseable {

    /** One data point of a gauge, with its own attributes and those of the resource it came on. */
    public record GaugePoint(double value, Map<String, String> attributes, Map<String, String> resource) {
    }

    private final HttpServer server;
    private final List<ExportMetricsServiceRequest> received = new CopyOnWriteArrayList<>();

    private OtlpReceiver(HttpServer server) {
        this.server = server;
    }

    /** Listens on an ephemeral port of the loopback address. */
    public static OtlpReceiver start() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        OtlpReceiver receiver = new OtlpReceiver(server);
        server.createContext("/v1/metrics", receiver::handle);
        server.start();
        return receiver;
    }

    /** The URL to export to, {@code http://127.0.0.1:PORT/v1/metrics}. */
    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1/metrics";
    }

    /** How many exports it has decoded so far. */
    public int exports() {
        return received.size();
    }

    /**
     * The last data point received of gauge {@code name} whose attributes include every entry of
     * {@code attributes}, in the order the exports arrived; empty when none did.
     */
    public Optional<GaugePoint> latestGauge(String name, Map<String, String> attributes) {
        GaugePoint found = null;
        for (ExportMetricsServiceRequest request : received) {
            for (ResourceMetrics rm : request.getResourceMetricsList()) {
                for (ScopeMetrics sm : rm.getScopeMetricsList()) {
                    for (Metric metric : sm.getMetricsList()) {
                        if (!metric.getName().equals(name) || !metric.hasGauge()) {
                            continue;
                        }
                        for (NumberDataPoint point : metric.getGauge().getDataPointsList()) {
                            Map<String, String> own = attributes(point.getAttributesList());
                            if (own.entrySet().containsAll(attributes.entrySet())) {
                                double value = point.hasAsInt() ? point.getAsInt() : point.getAsDouble();
                                found = new GaugePoint(value, own, attributes(rm.getResource().getAttributesList()));
                            }
                        }
                    }
                }
            }
        }
        return Optional.ofNullable(found);
    }

    @Override
    public void close() {
        server.stop(0);
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
}
