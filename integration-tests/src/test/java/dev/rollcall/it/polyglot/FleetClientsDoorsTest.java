package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.polyglot.FleetClientProcess.Client;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.server.FleetServer;
import dev.rollcall.server.ServerKeys;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.tls.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fleet clients through the service's doors: mutual TLS ({@code rollcall.serve.tls.*}) and a
 * bearer token ({@code rollcall.serve.token-file}). With the right certificate and token each client
 * follows the service; with a wrong token it is refused, says why, and stops (exit 2) instead of
 * retrying forever.
 */
class FleetClientsDoorsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @AutoClose
    private final Closer closer = new Closer();
    @TempDir
    Path dir;
    private TestCertificates certificates;
    private FleetServer server;
    private String workerUrl;

    @BeforeEach
    void serveBehindMutualTlsAndAToken() throws Exception {
        certificates = TestCertificates.generate(dir);
        Path token = Files.writeString(dir.resolve("token"), "s3cret-fleet-token\n");
        WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0"));
        workerUrl = fleet.worker(0).endpoint().url();
        PushDiscovery discovery = new PushDiscovery();
        discovery.push(fleet.endpoints());
        WorkerResolver resolver = closer.add(WorkerResolver.builder().name("serve-doors").discovery(discovery)
                .policy(w -> Verdict.accept()).fetchSchemas(false).build());
        resolver.awaitWorkers(1, WAIT);
        RollcallConfig config = RollcallConfig.of(Map.of(
                ServerKeys.TLS_CERT.name(), certificates.server().certificate().toString(),
                ServerKeys.TLS_KEY.name(), certificates.server().key().toString(),
                ServerKeys.TLS_CLIENT_CA.name(), certificates.ca().toString(),
                ServerKeys.TOKEN_FILE.name(), token.toString()));
        server = closer.add(FleetServer.builder(resolver).config(config).host("127.0.0.1").port(0).http(false).start());
    }

    private FleetClientProcess watch(Client client, Path tokenFile) {
        return closer.add(FleetClientProcess.watch(client, server.grpcAddress(), "--token-file", tokenFile.toString(),
                "--tls-ca", certificates.ca().toString(),
                "--tls-cert", certificates.client().certificate().toString(),
                "--tls-key", certificates.client().key().toString()));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Client.class)
    void withItsCertificateAndTheTokenTheClientFollowsTheService(Client client) throws Exception {
        Path token = Files.writeString(dir.resolve("client-token"), "s3cret-fleet-token");
        FleetClientProcess watch = watch(client, token);
        await().atMost(WAIT).untilAsserted(() -> assertThat(watch.saw(s -> s.instance().equals(server.instanceId())
                && s.compatible().equals(Map.of(workerUrl, "1.0.0")))).as("%s", watch.transcript()).isTrue());
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Client.class)
    void aWrongTokenIsRefusedAndTheClientSaysSoAndStops(Client client) throws Exception {
        Path token = Files.writeString(dir.resolve("wrong-token"), "not-the-token");
        FleetClientProcess watch = watch(client, token);
        assertThat(watch.awaitExit(WAIT)).as("%s", watch.transcript()).isEqualTo(2);
        assertThat(watch.errors()).as("%s", watch.transcript()).contains("refused: UNAUTHENTICATED");
        assertThat(watch.seen()).isEqualTo(List.of());
    }
}
