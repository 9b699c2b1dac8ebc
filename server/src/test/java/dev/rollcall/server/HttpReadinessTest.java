package dev.rollcall.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.server.internal.http.FleetHttpDoor;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * {@code /readyz} and {@code /healthz} of {@code rollcall serve}'s HTTP port, over real HTTP against a
 * real loopback fleet behind a {@code static} discovery: readiness follows the resolver's readiness
 * rule (compatible workers, not mere presence) as workers come and go; health follows the resolver.
 */
class HttpReadinessTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @AutoClose
    final Closer closer = new Closer();

    private final WorkerFleet fleet = closer.add(WorkerFleet.start());

    /** A server's HTTP door for {@code resolver} on loopback, any free port. */
    static FleetHttpDoor door(Closer closer, WorkerResolver resolver, Map<String, String> keys) throws IOException {
        Map<String, String> all = new java.util.HashMap<>(Map.of("rollcall.serve.host", "127.0.0.1",
                "rollcall.serve.http-port", "0"));
        all.putAll(keys);
        return closer.add(FleetHttpDoor.start(resolver, RollcallConfig.of(all),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)));
    }

    static HttpResponse<String> get(FleetHttpDoor door, String path) throws IOException, InterruptedException {
        URI uri = URI.create("http://127.0.0.1:" + door.address().getPort() + path);
        return HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private WorkerResolver staticResolver(List<WorkerEndpoint> endpoints, int minWorkers) {
        return closer.add(WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", String.join(",", endpoints.stream().map(WorkerEndpoint::url).toList()),
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0.0",
                "rollcall.readiness.min-workers", Integer.toString(minWorkers),
                // Workers start after the resolver first probed their address: keep the retries short.
                "rollcall.probe.backoff.initial", "100ms",
                "rollcall.probe.backoff.max", "500ms"))));
    }

    @Test
    void readyzIs503Then200Then503AsCompatibleWorkersComeAndGoAndARejectedVersionNeverCounts() throws Exception {
        WorkerEndpoint first = WorkerFleet.freeEndpoint();
        WorkerEndpoint second = WorkerFleet.freeEndpoint();
        WorkerEndpoint tooNew = WorkerFleet.freeEndpoint();
        WorkerResolver resolver = staticResolver(List.of(first, second, tooNew), 2);
        FleetHttpDoor door = door(closer, resolver, Map.of());
        resolver.await(s -> s.counts().unreachable() == 3, WAIT);

        HttpResponse<String> nobody = get(door, "/readyz");
        assertThat(nobody.statusCode()).as(nobody.body()).isEqualTo(503);
        assertThat(nobody.body()).startsWith("not ready: 0 compatible workers (2 required)").endsWith("\n");
        assertThat(nobody.headers().firstValue("content-type")).hasValue("text/plain; charset=utf-8");

        fleet.workerOn(tooNew, "2.0.0");
        FleetWorker one = fleet.workerOn(first, "1.0.0");
        resolver.await(s -> s.counts().rejected() == 1 && s.counts().compatible() == 1, WAIT);
        HttpResponse<String> presentButRejected = get(door, "/readyz");
        assertThat(presentButRejected.statusCode()).as(presentButRejected.body()).isEqualTo(503);
        assertThat(presentButRejected.body()).contains("1 compatible workers (2 required)")
                .contains("1 rejected by version");

        FleetWorker two = fleet.workerOn(second, "1.4.2");
        resolver.awaitWorkers(2, WAIT);
        HttpResponse<String> ready = get(door, "/readyz");
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        assertThat(ready.body()).isEqualTo("ready: 2 compatible workers (2 required)\n");

        two.stop();
        resolver.await(s -> s.counts().compatible() == 1, WAIT);
        HttpResponse<String> oneLeft = get(door, "/readyz");
        assertThat(oneLeft.statusCode()).as(oneLeft.body()).isEqualTo(503);
        assertThat(oneLeft.body()).contains("1 compatible workers (2 required)");
        assertThat(one.isRunning()).isTrue();
    }

    @Test
    void healthzIs200WhileTheResolverRunsAnd503OnceItIsClosedAndReadyzSaysNotReadyThen() throws Exception {
        WorkerFleet running = closer.add(WorkerFleet.start("1.0.0"));
        WorkerResolver resolver = staticResolver(running.endpoints(), 1);
        FleetHttpDoor door = door(closer, resolver, Map.of());
        resolver.awaitWorkers(1, WAIT);

        HttpResponse<String> healthy = get(door, "/healthz");
        assertThat(healthy.statusCode()).as(healthy.body()).isEqualTo(200);
        assertThat(healthy.body()).startsWith("ok: resolver " + resolver.name() + " runs");
        assertThat(get(door, "/readyz").statusCode()).isEqualTo(200);

        resolver.close();

        HttpResponse<String> closed = get(door, "/healthz");
        assertThat(closed.statusCode()).as(closed.body()).isEqualTo(503);
        assertThat(closed.body()).isEqualTo("unhealthy: resolver " + resolver.name() + " is closed\n");
        HttpResponse<String> notReady = get(door, "/readyz");
        assertThat(notReady.statusCode()).as("its last snapshot still lists a worker, but nothing verifies it any more")
                .isEqualTo(503);
        assertThat(notReady.body()).contains("is closed");
    }

    @Test
    void aDiscoveryErrorsHostileTextReachesReadyzEscapedOnOneBoundedLine() throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        WorkerResolver resolver = closer.add(WorkerResolver.builder().discovery(discovery)
                .policy(SemverRangePolicy.of("^1")).name("hostile").build());
        FleetHttpDoor door = door(closer, resolver, Map.of());
        discovery.push(List.of());
        String hostile = "registry says \u001b[31mred\r\nX-Injected: yes\u0085" + "x".repeat(5000);

        discovery.fail(new IllegalStateException(hostile));
        resolver.await(s -> s.discoveryProblem().isPresent(), WAIT);

        HttpResponse<String> answer = get(door, "/readyz");
        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(answer.headers().firstValue("x-injected")).isEmpty();
        String line = answer.body();
        assertThat(line).endsWith("\n").contains(PeerText.escape("\u001b[31mred\r\nX-Injected"));
        assertThat(PeerText.isClean(line.substring(0, line.length() - 1))).as(line).isTrue();
        assertThat(line.length()).isLessThan(1000);
    }
}
