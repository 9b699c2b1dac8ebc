package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.worker.RollcallWorker;
import io.micrometer.core.instrument.MeterRegistry;
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
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Rollcall's meters over OTLP/HTTP to a receiver stand-in: a JDK HTTP server on loopback that takes
 * {@code POST /v1/metrics} and decodes {@code ExportMetricsServiceRequest} with the protos
 * {@code micrometer-registry-otlp} itself brings.
 */
class OtlpMetricsTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** What the receiver answers: 200, 500, or nothing until the test ends. */
    private enum Answer { OK, FAIL, HANG }

    private final List<ExportMetricsServiceRequest> received = new CopyOnWriteArrayList<>();
    private final AtomicInteger posts = new AtomicInteger();
    private final CountDownLatch testOver = new CountDownLatch(1);
    private volatile Answer answer = Answer.OK;
    private HttpServer receiver;

    private String startReceiver() throws IOException {
        receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        receiver.createContext("/v1/metrics", this::handle);
        receiver.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        receiver.start();
        return "http://127.0.0.1:" + receiver.getAddress().getPort() + "/v1/metrics";
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange; InputStream body = exchange.getRequestBody()) {
            posts.incrementAndGet();
            byte[] bytes = body.readAllBytes();
            switch (answer) {
                case HANG -> {
                    try {
                        testOver.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                case FAIL -> exchange.sendResponseHeaders(500, -1);
                case OK -> {
                    received.add(ExportMetricsServiceRequest.parseFrom(bytes));
                    exchange.sendResponseHeaders(200, -1);
                }
            }
        }
    }

    @AfterEach
    void stopReceiver() {
        testOver.countDown();
        if (receiver != null) {
            receiver.stop(0);
        }
    }

    /** Discovery that hands the test its listener. */
    private static final class Handle implements WorkerDiscovery {
        final CompletableFuture<CandidateListener> listener = new CompletableFuture<>();

        @Override
        public void start(CandidateListener l) {
            listener.complete(l);
        }

        @Override
        public void close() {
        }
    }

    private static RollcallConfig otlpConfig(String url) {
        return RollcallConfig.of(Map.of("rollcall.metrics.otlp.url", url, "rollcall.metrics.otlp.step", "1s"));
    }

    /** The latest value of gauge {@code name} whose attributes include {@code attributes}, in any export received. */
    private Optional<Double> latest(String name, Map<String, String> attributes) {
        Double found = null;
        for (ExportMetricsServiceRequest request : received) {
            for (ResourceMetrics rm : request.getResourceMetricsList()) {
                for (ScopeMetrics sm : rm.getScopeMetricsList()) {
                    for (Metric metric : sm.getMetricsList()) {
                        if (metric.getName().equals(name) && metric.hasGauge()) {
                            for (NumberDataPoint point : metric.getGauge().getDataPointsList()) {
                                if (attributes(point.getAttributesList()).entrySet().containsAll(attributes.entrySet())) {
                                    found = point.getAsDouble();
                                }
                            }
                        }
                    }
                }
            }
        }
        return Optional.ofNullable(found);
    }

    private static Map<String, String> attributes(List<KeyValue> list) {
        Map<String, String> map = new HashMap<>();
        list.forEach(kv -> map.put(kv.getKey(), kv.getValue().getStringValue()));
        return map;
    }

    @Test
    void theReceiverFindsRollcallWorkersByStateAndVersionOnAResourceNamingTheService() throws Exception {
        String url = startReceiver();
        Handle discovery = new Handle();
        try (RollcallWorker a = RollcallWorker.builder().version("1.4.0").start();
             RollcallWorker b = RollcallWorker.builder().version("1.4.0").start();
             RollcallWorker c = RollcallWorker.builder().version("2.0.0").start();
             WorkerResolver resolver = WorkerResolver.builder().name("otlp").discovery(discovery)
                     .policy(w -> w.version().startsWith("1.") ? Verdict.accept() : Verdict.reject("not 1.x"))
                     .fetchSchemas(false).probeTimeout(Duration.ofSeconds(30)).build();
             RollcallMetrics metrics = new RollcallMetrics(resolver)) {
            MeterRegistry otlp = OtlpMetrics.start(otlpConfig(url), "rollcall-coordinator", "3.2.1",
                    "coordinator-7").orElseThrow();
            try {
                metrics.bindTo(otlp);
                exportsTheFleet(discovery, a, b, c);
            } finally {
                otlp.close();
            }
        }
    }

    private void exportsTheFleet(Handle discovery, RollcallWorker a, RollcallWorker b, RollcallWorker c)
            throws Exception {
        discovery.listener.get(5, TimeUnit.SECONDS).onCandidates(Set.of(a.endpoint(), b.endpoint(), c.endpoint()));

        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(latest("rollcall.workers", Map.of("state", "compatible", "resolver", "otlp")))
                    .contains(2.0);
            assertThat(latest("rollcall.workers", Map.of("state", "rejected"))).contains(1.0);
            assertThat(latest("rollcall.workers.versions", Map.of("version", "1.4.0"))).contains(2.0);
            assertThat(latest("rollcall.workers.versions", Map.of("version", "2.0.0"))).contains(1.0);
        });
        Map<String, String> resource = attributes(received.get(received.size() - 1).getResourceMetrics(0)
                .getResource().getAttributesList());
        assertThat(resource).containsEntry("service.name", "rollcall-coordinator")
                .containsEntry("service.version", "3.2.1")
                .containsEntry("service.instance.id", "coordinator-7");
    }

    @Test
    void aReceiverThatFailsOrHangsBlocksNeitherTheResolverNorTheClose() throws Exception {
        String url = startReceiver();
        answer = Answer.FAIL;
        Handle discovery = new Handle();
        try (RollcallWorker a = RollcallWorker.builder().version("1.4.0").start();
             RollcallWorker b = RollcallWorker.builder().version("1.4.0").start();
             WorkerResolver resolver = WorkerResolver.builder().name("otlp-lie").discovery(discovery)
                     .policy(w -> Verdict.accept()).fetchSchemas(false).probeTimeout(Duration.ofSeconds(30))
                     .build()) {
            MeterRegistry otlp = OtlpMetrics.start(otlpConfig(url), "rollcall-coordinator", "3.2.1", "c-1")
                    .orElseThrow();
            new RollcallMetrics(resolver).bindTo(otlp);
            CandidateListener candidates = discovery.listener.get(5, TimeUnit.SECONDS);
            candidates.onCandidates(Set.of(a.endpoint()));
            resolver.awaitWorkers(1, WAIT);

            // Refused exports: the registry keeps exporting, and the next accepted one has the fleet.
            await().atMost(WAIT).until(() -> posts.get() >= 2);
            answer = Answer.OK;
            await().atMost(WAIT).until(() -> latest("rollcall.workers", Map.of("state", "compatible")).isPresent());

            // A receiver that takes the request and never answers holds only the registry's thread.
            answer = Answer.HANG;
            int before = posts.get();
            await().atMost(WAIT).until(() -> posts.get() > before);
            candidates.onCandidates(Set.of(a.endpoint(), b.endpoint()));
            assertThat(resolver.awaitWorkers(2, WAIT).workers()).hasSize(2);

            CompletableFuture<Void> closed = CompletableFuture.runAsync(otlp::close);
            closed.get(WAIT.toSeconds(), TimeUnit.SECONDS); // its read timeout ends the last export
            assertThat(otlp.isClosed()).isTrue();
        }
    }

    @Test
    void theOtlpKeysBesideTheResolversAreLeftToTheHostAndAMisspeltOneIsRefusedNamingTheNearest() throws Exception {
        // Core's own test providers: a backend that finds nothing, a policy that takes any version.
        Map<String, String> fleet = Map.of("rollcall.discovery.type", "nothing", "rollcall.policy.type", "any");
        Map<String, String> withOtlp = new HashMap<>(fleet);
        withOtlp.put("rollcall.metrics.otlp.url", "http://127.0.0.1:4318/v1/metrics");
        withOtlp.put("rollcall.metrics.otlp.step", "10s");
        try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(withOtlp))) {
            assertThat(resolver.name()).isNotBlank();
        }

        Map<String, String> misspelt = new HashMap<>(fleet);
        misspelt.put("rollcall.metrics.otlp.ulr", "http://127.0.0.1:4318/v1/metrics");
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(misspelt)).close())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.metrics.otlp.ulr")
                .hasMessageContaining("rollcall.metrics.otlp.url");
    }

    @Test
    void withoutAUrlNothingIsExported() {
        assertThat(OtlpMetrics.start(RollcallConfig.of(Map.of()), "s", "1", "i")).isEmpty();
    }

    @Test
    void aUrlThatIsNotHttpFailsNamingTheKeyAndTheValueEscaped() {
        assertThatThrownBy(() -> OtlpMetrics.start(otlpConfig("grpc://127.0.0.1:4317\u001b[2J"), "s", "1", "i"))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.metrics.otlp.url")
                .hasMessageContaining("grpc://127.0.0.1:4317")
                .hasMessageNotContaining("\u001b");
    }
}
