package dev.rollcall.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.server.internal.http.FleetHttpDoor;
import dev.rollcall.testkit.Closer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * {@code /metrics} of {@code rollcall serve}'s HTTP port, over real HTTP: the Prometheus text format
 * (OpenMetrics when asked), carrying the resolver's meters of a real loopback fleet; a scraper that
 * reads nothing of it holds no other request.
 */
class HttpMetricsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** What Prometheus 2.x/3.x sends when it scrapes. */
    private static final String PROMETHEUS_ACCEPT = "application/openmetrics-text;version=1.0.0,"
            + "application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

    @AutoClose
    final Closer closer = new Closer();

    private final WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0", "1.2.0", "2.0.0"));
    private final WorkerResolver resolver = closer.add(WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
            "rollcall.discovery.type", "static",
            "rollcall.discovery.static.endpoints", fleet.endpointList(),
            "rollcall.policy.type", "semver",
            "rollcall.policy.semver.range", "^1.0.0"))));
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    private FleetHttpDoor door() throws Exception {
        return closer.add(FleetHttpDoor.start(resolver, RollcallConfig.of(Map.of("rollcall.serve.host", "127.0.0.1",
                "rollcall.serve.http-port", "0")), registry));
    }

    private static HttpResponse<String> get(FleetHttpDoor door, String path, String accept) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + door.address().getPort()
                + path)).timeout(Duration.ofSeconds(10)).GET();
        if (accept != null) {
            request.header("Accept", accept);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void metricsIsPrometheusTextWithTheResolversMeters() throws Exception {
        FleetHttpDoor door = door();
        resolver.await(s -> s.counts().compatible() == 2 && s.counts().rejected() == 1, WAIT);

        HttpResponse<String> answer = get(door, "/metrics", null);

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("content-type")).hasValue("text/plain; version=0.0.4; charset=utf-8");
        PrometheusText text = PrometheusText.parse(answer.body());
        String ours = "resolver=\"" + resolver.name() + "\"";
        assertThat(text.value("rollcall_workers", ours, "state=\"compatible\"")).isEqualTo(2.0);
        assertThat(text.value("rollcall_workers", ours, "state=\"rejected\"")).isEqualTo(1.0);
        assertThat(text.value("rollcall_probes_sent_total", ours)).isGreaterThanOrEqualTo(3.0);
        assertThat(text.value("rollcall_snapshot_number", ours)).isPositive();
        assertThat(text.types).containsEntry("rollcall_workers", "gauge").containsEntry("rollcall_probes_sent_total", "counter");
    }

    @Test
    void aScraperThatAsksForOpenMetricsGetsIt() throws Exception {
        FleetHttpDoor door = door();
        resolver.awaitWorkers(2, WAIT);

        HttpResponse<String> answer = get(door, "/metrics", PROMETHEUS_ACCEPT);

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("content-type"))
                .hasValue("application/openmetrics-text; version=1.0.0; charset=utf-8");
        assertThat(answer.body()).contains("# TYPE rollcall_workers gauge").endsWith("# EOF\n");
    }

    @Test
    void scrapersThatReadNothingOfALargeMetricsPageHoldNeitherReadyzNorTheNextScrape() throws Exception {
        // A registry as large as a busy service's: each answer is far beyond the sockets' buffers.
        for (int i = 0; i < 4000; i++) {
            Gauge.builder("test.padding", () -> 1.0).tag("series", "a-fairly-long-label-value-" + i).register(registry);
        }
        AtomicInteger scrapes = new AtomicInteger();
        Gauge.builder("test.scrapes", scrapes, AtomicInteger::incrementAndGet).register(registry);
        FleetHttpDoor door = door();
        InetSocketAddress at = new InetSocketAddress("127.0.0.1", door.address().getPort());
        List<Socket> stalled = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) { // more than the port's connection threads: each has one stalled reader
                Socket s = new Socket();
                stalled.add(s);
                s.setReceiveBufferSize(4096);
                s.connect(at, 5000);
                OutputStream out = s.getOutputStream();
                out.write("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
            org.awaitility.Awaitility.await().atMost(WAIT).until(() -> scrapes.get() >= 4);

            HttpResponse<String> ready = get(door, "/readyz", null);
            HttpResponse<String> metrics = get(door, "/metrics", null);

            assertThat(ready.statusCode()).as(ready.body()).isIn(200, 503);
            assertThat(ready.body()).contains("compatible workers");
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(PrometheusText.parse(metrics.body()).value("test_padding", "series=\"a-fairly-long-label-value-3999\""))
                    .isEqualTo(1.0);
        } finally {
            for (Socket s : stalled) {
                s.close();
            }
        }
    }
}
