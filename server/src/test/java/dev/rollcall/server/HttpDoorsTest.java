package dev.rollcall.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.server.RawHttp.Answer;
import dev.rollcall.server.internal.http.FleetHttpDoor;
import dev.rollcall.testkit.Closer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The doors of {@code rollcall serve}'s HTTP port, with real sockets: the console page on the same
 * port as the probe paths; which {@code Host} each answers (an IP literal, as kubelet and Prometheus
 * send, for the probe paths; a forged name nowhere); methods, unknown paths and oversized heads as
 * the console answers them; a port bound beyond loopback without {@code rollcall.console.allow-remote}.
 */
class HttpDoorsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final List<String> PROBE_PATHS = List.of("/readyz", "/healthz", "/metrics");

    @AutoClose
    final Closer closer = new Closer();

    private final WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0"));
    private final WorkerResolver resolver = closer.add(WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
            "rollcall.discovery.type", "static",
            "rollcall.discovery.static.endpoints", fleet.endpointList(),
            "rollcall.policy.type", "semver",
            "rollcall.policy.semver.range", "^1.0.0"))));

    private InetSocketAddress door(Map<String, String> keys) throws Exception {
        FleetHttpDoor door = HttpReadinessTest.door(closer, resolver, keys);
        return new InetSocketAddress("127.0.0.1", door.address().getPort());
    }

    @Test
    void theConsolePageIsServedOnTheSamePortAsTheProbePaths() throws Exception {
        InetSocketAddress at = door(Map.of());
        resolver.awaitWorkers(1, WAIT);

        Answer page = RawHttp.get(at, "/", "127.0.0.1:" + at.getPort());
        Answer fleetJson = RawHttp.get(at, "/api/fleet", "localhost");
        Answer ready = RawHttp.get(at, "/readyz", "127.0.0.1");

        assertThat(page.status()).isEqualTo(200);
        assertThat(page.header("Content-Type")).isEqualTo("text/html; charset=utf-8");
        assertThat(page.body()).contains("<script src=\"console.js\"");
        assertThat(fleetJson.status()).isEqualTo(200);
        assertThat(fleetJson.body()).contains(fleet.worker(0).endpoint().url());
        assertThat(ready.status()).isEqualTo(200);
    }

    @Test
    void probePathsAnswerAnIpLiteralHostAsKubeletAndPrometheusSendItAndThePageDoesNot() throws Exception {
        InetSocketAddress at = door(Map.of());
        resolver.awaitWorkers(1, WAIT);

        for (String podAddress : List.of("10.244.1.17:7701", "10.244.1.17", "[fd00:10:244::17]:7701", "127.0.0.1")) {
            for (String path : PROBE_PATHS) {
                assertThat(RawHttp.get(at, path, podAddress).status()).as(path + " for Host " + podAddress).isEqualTo(200);
            }
        }
        for (String page : List.of("/", "/api/fleet", "/console.js")) {
            Answer refused = RawHttp.get(at, page, "10.244.1.17:7701");
            assertThat(refused.status()).as(page).isEqualTo(403);
            assertThat(refused.body()).contains("rollcall.console.allowed-hosts");
        }
    }

    @Test
    void aForgedHostNameIsRefusedOnEveryPathAsTheConsoleRefusesIt() throws Exception {
        InetSocketAddress at = door(Map.of());
        int port = at.getPort();

        for (String forged : List.of("evil.example:" + port, "127.0.0.1.nip.io", "localhost.evil.example",
                "127.evil.example:" + port, "10.244.1.17.nip.io")) {
            for (String path : List.of("/readyz", "/healthz", "/metrics", "/", "/api/fleet")) {
                Answer a = RawHttp.get(at, path, forged);
                assertThat(a.status()).as(path + " for Host " + forged).isEqualTo(403);
                assertThat(a.body()).as(path).contains(forged.replaceFirst(":\\d+$", ""))
                        .contains("rollcall.console.allowed-hosts").contains("DNS rebinding");
            }
        }
        assertThat(RawHttp.get(at, "/readyz", null).status()).as("no Host").isEqualTo(400);
    }

    @Test
    void aNameTheOperatorListedIsAnsweredOnTheProbePathsAndThePage() throws Exception {
        InetSocketAddress at = door(Map.of("rollcall.console.allowed-hosts", "rollcall.fleet.svc"));
        resolver.awaitWorkers(1, WAIT);

        for (String path : List.of("/readyz", "/metrics", "/", "/api/fleet")) {
            assertThat(RawHttp.get(at, path, "rollcall.fleet.svc:7701").status()).as(path).isEqualTo(200);
        }
    }

    @Test
    void methodsUnknownPathsAndOversizedHeadsAreAnsweredAsTheConsoleAnswersThem() throws Exception {
        InetSocketAddress at = door(Map.of());
        resolver.awaitWorkers(1, WAIT);

        Answer head = RawHttp.send(at, "HEAD", "/readyz", "127.0.0.1");
        assertThat(head.status()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
        assertThat(Integer.parseInt(head.header("Content-Length"))).isEqualTo(RawHttp.get(at, "/readyz", "127.0.0.1")
                .body().length());
        Answer post = RawHttp.send(at, "POST", "/readyz", "127.0.0.1", "Content-Length: 0");
        assertThat(post.status()).isEqualTo(405);
        assertThat(post.header("Allow")).isEqualTo("GET, HEAD");
        Answer unknown = RawHttp.get(at, "/livez", "127.0.0.1");
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(unknown.body()).contains("/healthz, /metrics, /readyz");
        Answer huge = RawHttp.send(at, "GET", "/metrics", "127.0.0.1", "X-Padding: " + "p".repeat(10_000));
        assertThat(huge.status()).isEqualTo(431);
        Answer query = RawHttp.get(at, "/readyz?verbose=1", "127.0.0.1");
        assertThat(query.status()).as("a query does not change the path").isEqualTo(200);
    }

    @Test
    void aServiceBoundBeyondLoopbackNeedsNoAllowRemoteAndStillAnswersOverLoopback() throws Exception {
        // Every address of this host; the test itself talks over loopback only.
        InetSocketAddress at = door(Map.of("rollcall.serve.host", "0.0.0.0"));
        resolver.awaitWorkers(1, WAIT);

        assertThat(RawHttp.get(at, "/readyz", "10.244.1.17:7701").status()).isEqualTo(200);
        assertThat(RawHttp.get(at, "/", "localhost").status()).as("the page, to a peer on this host").isEqualTo(200);
    }
}
