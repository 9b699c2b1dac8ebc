package dev.rollcall.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.local.WorkerFleet;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A coordinator application on a real port, configured by properties only, over a real loopback
 * fleet: its {@code readiness} health follows {@code rollcall.readiness.min-workers} (out of service
 * until enough workers are compatible, up then, out again when one drains), {@code /actuator/rollcall}
 * shows every candidate with its reason, and the resolver's meters are in the application's registry.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ReadinessOverHttpTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final WorkerFleet FLEET = WorkerFleet.start("1.0.0", "1.0.0", "2.0.0");
    /** In discovery from the start, but nobody serves there until the test starts a worker on it. */
    private static final WorkerEndpoint LATE = WorkerFleet.freeEndpoint();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @DynamicPropertySource
    static void rollcall(DynamicPropertyRegistry registry) {
        List<String> urls = new ArrayList<>();
        FLEET.endpoints().forEach(e -> urls.add(e.url()));
        urls.add(LATE.url());
        registry.add("rollcall.discovery.type", () -> "static");
        registry.add("rollcall.discovery.static.endpoints", () -> String.join(",", urls));
        registry.add("rollcall.policy.type", () -> "semver");
        registry.add("rollcall.policy.semver.range", () -> "^1.0.0");
        registry.add("rollcall.readiness.min-workers", () -> "3");
        // The late worker is found by a retry: keep retries short so the test does not wait for them.
        registry.add("rollcall.probe.backoff.initial", () -> "100ms");
        registry.add("rollcall.probe.backoff.max", () -> "500ms");
        registry.add("management.endpoints.web.exposure.include", () -> "health,rollcall");
        registry.add("management.endpoint.health.show-details", () -> "always");
    }

    @AfterAll
    static void stopFleet() {
        FLEET.close();
    }

    @LocalServerPort
    int port;
    @Autowired
    WorkerResolver resolver;
    @Autowired
    MeterRegistry meters;

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).GET().build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode json(HttpResponse<String> response) {
        return JSON.readTree(response.body());
    }

    @Test
    void readinessIsOutOfServiceUntilMinWorkersAreCompatibleUpThenAndDownAgainWhenOneDrains() throws Exception {
        resolver.await(s -> s.counts().pending() == 0 && s.counts().compatible() == 2 && s.counts().unreachable() == 1,
                WAIT);
        HttpResponse<String> notYet = get("/actuator/health/readiness");
        assertThat(notYet.statusCode()).as(notYet.body()).isEqualTo(503);
        JsonNode rollcall = json(notYet).path("components").path("rollcall");
        assertThat(json(notYet).path("status").asString()).isEqualTo("OUT_OF_SERVICE");
        assertThat(rollcall.path("status").asString()).isEqualTo("OUT_OF_SERVICE");
        assertThat(rollcall.path("details").path("reason").asString())
                .contains("2 compatible workers (3 required)").contains("1 rejected by version").contains("1 unreachable");
        assertThat(json(notYet).path("components").has("readinessState")).as("Spring's own state stays in").isTrue();

        FleetWorker late = FLEET.workerOn(LATE, "1.0.0");
        try {
            resolver.awaitWorkers(3, WAIT);
            HttpResponse<String> ready = get("/actuator/health/readiness");
            assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
            assertThat(json(ready).path("components").path("rollcall").path("details").path("compatibleWorkers").asInt())
                    .isEqualTo(3);
            assertThat(meters.get("rollcall.workers").tag("state", "compatible").gauge().value()).isEqualTo(3);
            assertThat(meters.get("rollcall.probes.sent").functionCounter().count()).isPositive();

            FLEET.worker(0).drain();
            resolver.await(s -> s.counts().draining() == 1, WAIT);
            HttpResponse<String> drained = get("/actuator/health/readiness");
            assertThat(drained.statusCode()).as(drained.body()).isEqualTo(503);
            assertThat(json(drained).path("components").path("rollcall").path("details").path("reason").asString())
                    .contains("2 compatible workers (3 required)").contains("1 draining");
        } finally {
            FLEET.worker(0).resume();
            late.stop();
        }
    }

    @Test
    void theRollcallEndpointSendsEveryDocumentedFieldWithNullForDiscoveryProblemsWhileHealthy() throws Exception {
        resolver.await(s -> s.counts().candidates() == 4 && s.counts().pending() == 0, WAIT);
        JsonNode fleet = json(get("/actuator/rollcall"));
        assertThat(fleet.propertyNames()).as(fleet.toString()).contains("snapshot", "publishedAt", "policy", "discovery",
                "staleSince", "discoveryProblem", "counts", "readiness", "candidates");
        assertThat(fleet.get("staleSince").isNull()).as("staleSince while discovery is healthy").isTrue();
        assertThat(fleet.get("discoveryProblem").isNull()).as("discoveryProblem while discovery is healthy").isTrue();
        for (JsonNode c : fleet.path("candidates")) {
            assertThat(c.propertyNames()).as(c.toString()).contains("endpoint", "state", "version", "reason");
        }
        JsonNode late = JSON.readTree(get("/actuator/rollcall/" + LATE.host() + ":" + LATE.port()).body());
        assertThat(late.propertyNames()).as(late.toString()).contains("endpoint", "state", "version", "reason",
                "instanceId", "discoveryLabels", "labels", "services");
    }

    @Test
    void theRollcallEndpointListsEveryCandidateWithItsStateVersionAndReason() throws Exception {
        resolver.await(s -> s.counts().candidates() == 4 && s.counts().rejected() == 1
                && s.counts().compatible() >= 2 && s.counts().pending() == 0, WAIT);
        HttpResponse<String> response = get("/actuator/rollcall");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode fleet = json(response);
        assertThat(fleet.path("policy").asString()).contains("^1.0.0");
        assertThat(fleet.path("discovery").asString()).contains("static");
        assertThat(fleet.path("snapshot").asLong()).isPositive();
        assertThat(fleet.hasNonNull("staleSince")).as("discovery is healthy").isFalse();
        assertThat(fleet.path("counts").path("candidates").asInt()).isEqualTo(4);
        assertThat(fleet.path("readiness").path("required").asInt()).isEqualTo(3);
        JsonNode candidates = fleet.path("candidates");
        assertThat(candidates.size()).isEqualTo(4);
        String old = FLEET.worker(2).endpoint().url();
        for (JsonNode c : candidates) {
            String url = c.path("endpoint").asString();
            if (url.equals(old)) {
                assertThat(c.path("state").asString()).isEqualTo("REJECTED");
                assertThat(c.path("version").asString()).isEqualTo("2.0.0");
                assertThat(c.path("reason").asString()).contains("2.0.0").contains("^1.0.0");
            } else if (url.equals(LATE.url()) && c.path("state").asString().equals("UNREACHABLE")) {
                assertThat(c.path("reason").asString()).isNotEmpty();
            } else {
                assertThat(c.path("state").asString()).as(c.toString()).isEqualTo("COMPATIBLE");
                assertThat(c.path("version").asString()).isEqualTo("1.0.0");
            }
        }

        WorkerEndpoint a = FLEET.worker(1).endpoint();
        HttpResponse<String> one = get("/actuator/rollcall/" + a.host() + ":" + a.port());
        assertThat(one.statusCode()).as(one.body()).isEqualTo(200);
        assertThat(json(one).path("version").asString()).isEqualTo("1.0.0");
        assertThat(json(one).path("instanceId").asString()).isEqualTo(FLEET.worker(1).instanceId());
        assertThat(get("/actuator/rollcall/127.0.0.1:1").statusCode()).as("not a candidate").isEqualTo(404);
    }
}
