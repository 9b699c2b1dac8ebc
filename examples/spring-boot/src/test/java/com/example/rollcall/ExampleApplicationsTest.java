package com.example.rollcall;

import static org.assertj.core.api.Assertions.assertThat;

import com.example.rollcall.coordinator.CoordinatorApplication;
import com.example.rollcall.worker.WorkerApplication;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The example as a consumer runs it, set up only by the starter, a backend, a policy and its YAML:
 * the coordinator is ready once the worker application serves, plans on it, and is out of service
 * again once the worker application stops.
 */
class ExampleApplicationsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
        int port = ((WebServerApplicationContext) app).getWebServer().getPort();
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Every actuator endpoint the page exposes answers JSON (a Jackson set Spring Boot cannot
     * serialise with answers 500), and Prometheus lists {@code rollcall_workers} by state, the states
     * adding up to the candidates.
     */
    @Test
    void theCoordinatorServesActuatorJsonAndPrometheusWithTheWorkersByState() throws Exception {
        ConfigurableApplicationContext worker = new SpringApplicationBuilder(WorkerApplication.class).profiles("worker")
                .run("--server.port=0", "--server.address=127.0.0.1", "--rollcall.worker.port=0");
        String url = worker.getBean(RollcallWorker.class).endpoint().url();
        try (ConfigurableApplicationContext coordinator = new SpringApplicationBuilder(CoordinatorApplication.class)
                .run("--server.port=0", "--server.address=127.0.0.1", "--rollcall.discovery.static.endpoints=" + url)) {
            coordinator.getBean(WorkerResolver.class).awaitWorkers(1, WAIT);
            for (String path : new String[] {"/actuator", "/actuator/health", "/actuator/rollcall"}) {
                HttpResponse<String> json = get(coordinator, path);
                assertThat(json.statusCode()).as(path + ": " + json.body()).isEqualTo(200);
                assertThat(json.headers().firstValue("Content-Type")).as(path).hasValueSatisfying(
                        type -> assertThat(type).contains("json"));
            }
            HttpResponse<String> fleet = get(coordinator, "/actuator/rollcall");
            assertThat(fleet.body()).as("fields docs/spring-boot.md names, null while discovery is healthy")
                    .contains("\"staleSince\":null").contains("\"discoveryProblem\":null");

            HttpResponse<String> scrape = get(coordinator, "/actuator/prometheus");
            assertThat(scrape.statusCode()).as(scrape.body()).isEqualTo(200);
            List<String> workers = scrape.body().lines().filter(l -> l.startsWith("rollcall_workers{")).toList();
            assertThat(workers).as(scrape.body()).anySatisfy(l -> assertThat(l)
                    .contains("resolver=\"coordinator\"").contains("state=\"compatible\"").endsWith(" 1.0"));
            assertThat(workers).as("every state, each its own line").anyMatch(l -> l.contains("state=\"rejected\""));
            double sum = workers.stream().mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
            assertThat(sum).as("sum(rollcall_workers) over the states: one candidate").isEqualTo(1.0);
        } finally {
            worker.close();
        }
    }

    @Test
    void theCoordinatorIsReadyWhileTheWorkerApplicationServesAndPlansOnIt() throws Exception {
        ConfigurableApplicationContext worker = new SpringApplicationBuilder(WorkerApplication.class).profiles("worker")
                .run("--server.port=0", "--server.address=127.0.0.1", "--rollcall.worker.port=0");
        String url = worker.getBean(RollcallWorker.class).endpoint().url();
        try (ConfigurableApplicationContext coordinator = new SpringApplicationBuilder(CoordinatorApplication.class)
                .run("--server.port=0", "--server.address=127.0.0.1", "--rollcall.discovery.static.endpoints=" + url)) {
            WorkerResolver resolver = coordinator.getBean(WorkerResolver.class);
            resolver.awaitWorkers(1, WAIT);
            HttpResponse<String> ready = get(coordinator, "/actuator/health/readiness");
            assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
            assertThat(get(coordinator, "/plan").body()).contains(url).contains("1.4.2");
            HttpResponse<String> fleet = get(coordinator, "/actuator/rollcall");
            assertThat(fleet.statusCode()).as(fleet.body()).isEqualTo(200);
            assertThat(fleet.body()).contains(url).contains("COMPATIBLE");

            worker.close();
            resolver.await(s -> s.workers().isEmpty(), WAIT);
            HttpResponse<String> gone = get(coordinator, "/actuator/health/readiness");
            assertThat(gone.statusCode()).as(gone.body()).isEqualTo(503);
        } finally {
            worker.close();
        }
    }
}
