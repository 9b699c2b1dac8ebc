package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.testkit.tls.TestCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Probes over TLS and mutual TLS ({@code grpcs://}), against real workers serving TLS on loopback,
 * with certificates made for the test: what is trusted is probed, what is not is excluded with the
 * TLS failure as its reason, and plaintext workers keep working beside TLS ones.
 */
class ProbeTlsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    static Path certDir;

    private static TestCertificates certs;

    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeAll
    static void makeCertificates() {
        certs = TestCertificates.generate(certDir);
    }

    @AfterEach
    void closeEverything() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T track(T closeable) {
        open.add(closeable);
        return closeable;
    }

    private RollcallWorker worker(String version, RollcallWorker.Builder b) throws IOException {
        return track(b.version(version).host("127.0.0.1").start());
    }

    private RollcallWorker tlsWorker(String version) throws IOException {
        return worker(version, RollcallWorker.builder().tls(certs.server().certificate(), certs.server().key()));
    }

    private RollcallWorker mtlsWorker(String version) throws IOException {
        return worker(version, RollcallWorker.builder().tls(certs.server().certificate(), certs.server().key())
                .clientCa(certs.ca()));
    }

    private RollcallWorker plainWorker(String version) throws IOException {
        return worker(version, RollcallWorker.builder());
    }

    /** A resolver over exactly these workers, policy "exact 1.0.0", with {@code extra} keys. */
    private WorkerResolver resolver(Map<String, String> extra, RollcallWorker... workers) {
        Map<String, String> keys = new HashMap<>(Map.of(
                "rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", endpoints(workers),
                "rollcall.policy.type", "exact",
                "rollcall.policy.exact.version", "1.0.0",
                "rollcall.probe.backoff.initial", "200ms",
                "rollcall.probe.backoff.max", "1s"));
        keys.putAll(extra);
        return track(WorkerResolver.fromConfig(RollcallConfig.of(keys)));
    }

    private static String endpoints(RollcallWorker... workers) {
        return java.util.Arrays.stream(workers).map(w -> w.endpoint().url()).collect(Collectors.joining(","));
    }

    private static FleetSnapshot settled(WorkerResolver resolver, int candidates) throws Exception {
        return resolver.await(s -> s.counts().candidates() == candidates && s.counts().pending() == 0, WAIT);
    }

    private static WorkerStatus status(FleetSnapshot s, RollcallWorker w) {
        return s.status(w.endpoint().url()).orElseThrow();
    }

    @Test
    void aTlsWorkerAdvertisesAGrpcsEndpoint() throws Exception {
        RollcallWorker tls = tlsWorker("1.0.0");
        RollcallWorker plain = plainWorker("1.0.0");

        assertThat(tls.endpoint().tls()).isTrue();
        assertThat(tls.endpoint().url()).isEqualTo("grpcs://127.0.0.1:" + tls.port());
        assertThat(tls.info().endpoint().url()).startsWith("grpcs://");
        assertThat(plain.endpoint().url()).startsWith("grpc://");
    }

    @Test
    void probesAWorkerOverTlsWithTheConfiguredCa() throws Exception {
        RollcallWorker w = tlsWorker("1.0.0");
        WorkerResolver resolver = resolver(Map.of("rollcall.probe.tls.ca", certs.ca().toString()), w);

        FleetSnapshot s = resolver.awaitWorkers(1, WAIT);

        assertThat(s.workers()).singleElement().satisfies(info -> {
            assertThat(info.endpoint().url()).isEqualTo("grpcs://127.0.0.1:" + w.port());
            assertThat(info.version()).isEqualTo("1.0.0");
            assertThat(info.instanceId()).isEqualTo(w.instanceId());
        });
    }

    @Test
    void withoutAConfiguredCaTheJdkTrustStoreRefusesATestCertificate() throws Exception {
        RollcallWorker w = tlsWorker("1.0.0");
        WorkerResolver resolver = resolver(Map.of(), w);

        WorkerStatus status = status(settled(resolver, 1), w);

        assertThat(status.state()).isEqualTo(State.UNREACHABLE);
        assertThat(status.reason()).startsWith("UNAVAILABLE: TLS handshake failed: ")
                .containsIgnoringCase("certification path");
    }

    @Test
    void refusesAWorkerWhoseCertificateIsNotSignedByTheConfiguredCa() throws Exception {
        RollcallWorker trusted = tlsWorker("1.0.0");
        RollcallWorker stranger = worker("1.0.0", RollcallWorker.builder()
                .tls(certs.otherServer().certificate(), certs.otherServer().key()));
        RollcallWorker plain = plainWorker("1.0.0");
        WorkerResolver resolver = resolver(Map.of("rollcall.probe.tls.ca", certs.ca().toString()),
                trusted, stranger, plain);

        FleetSnapshot s = settled(resolver, 3);

        assertThat(s.workers()).extracting(i -> i.endpoint().url())
                .containsExactlyInAnyOrder(trusted.endpoint().url(), plain.endpoint().url());
        WorkerStatus refused = status(s, stranger);
        assertThat(refused.state()).isEqualTo(State.UNREACHABLE);
        assertThat(refused.reason()).startsWith("UNAVAILABLE: TLS handshake failed: ")
                .containsIgnoringCase("certification path");
        assertThat(refused.info()).isEmpty();
    }

    @Test
    void plaintextAndTlsWorkersAreProbedSideBySide() throws Exception {
        RollcallWorker tls = tlsWorker("1.0.0");
        RollcallWorker mtls = mtlsWorker("1.0.0");
        RollcallWorker plain = plainWorker("1.0.0");
        RollcallWorker old = plainWorker("0.9.0");
        WorkerResolver resolver = resolver(Map.of(
                "rollcall.probe.tls.ca", certs.ca().toString(),
                "rollcall.probe.tls.cert", certs.client().certificate().toString(),
                "rollcall.probe.tls.key", certs.client().key().toString()), tls, mtls, plain, old);

        FleetSnapshot s = settled(resolver, 4);

        assertThat(s.workers()).extracting(i -> i.endpoint().url()).containsExactlyInAnyOrder(
                tls.endpoint().url(), mtls.endpoint().url(), plain.endpoint().url());
        assertThat(status(s, old).state()).isEqualTo(State.REJECTED);
    }

    @Test
    void probesAWorkerThatRequiresClientCertificatesWithTheConfiguredOne() throws Exception {
        RollcallWorker w = mtlsWorker("1.0.0");
        WorkerResolver resolver = track(WorkerResolver.builder()
                .config(RollcallConfig.of(Map.of(
                        "rollcall.discovery.type", "static",
                        "rollcall.discovery.static.endpoints", w.endpoint().url(),
                        "rollcall.policy.type", "exact",
                        "rollcall.policy.exact.version", "1.0.0")))
                .probeTrust(certs.ca())
                .probeClientCertificate(certs.client().certificate(), certs.client().key())
                .build());

        FleetSnapshot s = resolver.awaitWorkers(1, WAIT);

        assertThat(s.workers()).singleElement().satisfies(i -> assertThat(i.instanceId()).isEqualTo(w.instanceId()));
    }

    @Test
    void aProbeWithoutAClientCertificateIsRejectedByAnMtlsWorker() throws Exception {
        RollcallWorker mtls = mtlsWorker("1.0.0");
        RollcallWorker tls = tlsWorker("1.0.0");
        WorkerResolver resolver = resolver(Map.of("rollcall.probe.tls.ca", certs.ca().toString()), mtls, tls);

        FleetSnapshot s = settled(resolver, 2);

        assertThat(s.workers()).extracting(i -> i.endpoint().url()).containsExactly(tls.endpoint().url());
        WorkerStatus refused = status(s, mtls);
        assertThat(refused.state()).isEqualTo(State.UNREACHABLE);
        assertThat(refused.reason()).startsWith("UNAVAILABLE: TLS handshake failed: ")
                .containsIgnoringCase("certificate_required");
    }

    @Test
    void aClientCertificateFromAnotherCaIsRejectedByAnMtlsWorker() throws Exception {
        RollcallWorker mtls = mtlsWorker("1.0.0");
        WorkerResolver resolver = resolver(Map.of(
                "rollcall.probe.tls.ca", certs.ca().toString(),
                "rollcall.probe.tls.cert", certs.otherClient().certificate().toString(),
                "rollcall.probe.tls.key", certs.otherClient().key().toString()), mtls);

        WorkerStatus refused = status(settled(resolver, 1), mtls);

        assertThat(refused.state()).isEqualTo(State.UNREACHABLE);
        assertThat(refused.reason()).startsWith("UNAVAILABLE: TLS handshake failed: ")
                .containsIgnoringCase("certificate_required");
    }

    @Test
    void checksTheCertificateAgainstTheConfiguredAuthorityForAddressesItDoesNotName() throws Exception {
        TestCertificates.Issued named = certs.issueServer("named", List.of("worker.rollcall.test"));
        RollcallWorker w = worker("1.0.0", RollcallWorker.builder().tls(named.certificate(), named.key()));

        WorkerResolver byAddress = resolver(Map.of("rollcall.probe.tls.ca", certs.ca().toString()), w);
        WorkerStatus refused = status(settled(byAddress, 1), w);
        assertThat(refused.state()).isEqualTo(State.UNREACHABLE);
        assertThat(refused.reason()).startsWith("UNAVAILABLE: TLS handshake failed: ").contains("127.0.0.1");

        WorkerResolver byName = resolver(Map.of("rollcall.probe.tls.ca", certs.ca().toString(),
                "rollcall.probe.tls.authority", "worker.rollcall.test"), w);
        assertThat(byName.awaitWorkers(1, WAIT).workers()).hasSize(1);
    }

    @Test
    void aWorkerConfiguredThroughPropertiesServesMutualTls() throws Exception {
        RollcallWorker w = track(RollcallWorker.builder().version("1.0.0").config(RollcallConfig.of(Map.of(
                "rollcall.worker.tls.cert", certs.server().certificate().toString(),
                "rollcall.worker.tls.key", certs.server().key().toString(),
                "rollcall.worker.tls.client-ca", certs.ca().toString()))).start());
        assertThat(w.endpoint().url()).startsWith("grpcs://");

        WorkerResolver withCert = resolver(Map.of("rollcall.probe.tls.ca", certs.ca().toString(),
                "rollcall.probe.tls.cert", certs.client().certificate().toString(),
                "rollcall.probe.tls.key", certs.client().key().toString()), w);
        WorkerResolver without = resolver(Map.of("rollcall.probe.tls.ca", certs.ca().toString()), w);

        assertThat(withCert.awaitWorkers(1, WAIT).workers()).hasSize(1);
        assertThat(status(settled(without, 1), w).state()).isEqualTo(State.UNREACHABLE);
    }

    @Test
    void servesArrowFlightDoGetOverMutualTlsOnTheSamePort() throws Exception {
        BufferAllocator allocator = track(new RootAllocator());
        RollcallWorker w = worker("1.0.0", RollcallWorker.builder()
                .tls(certs.server().certificate(), certs.server().key())
                .clientCa(certs.ca())
                .flightProducer(new NumbersProducer(allocator)));

        List<Integer> received = new ArrayList<>();
        try (InputStream ca = Files.newInputStream(certs.ca());
             InputStream cert = Files.newInputStream(certs.client().certificate());
             InputStream key = Files.newInputStream(certs.client().key());
             FlightClient client = FlightClient.builder(allocator, Location.forGrpcTls("127.0.0.1", w.port()))
                     .trustedCertificates(ca).clientCertificate(cert, key).build();
             FlightStream stream = client.getStream(new Ticket(new byte[] {3}))) {
            while (stream.next()) {
                IntVector n = (IntVector) stream.getRoot().getVector("n");
                for (int i = 0; i < stream.getRoot().getRowCount(); i++) {
                    received.add(n.get(i));
                }
            }
        }
        assertThat(received).containsExactly(1, 2, 3);

        // Without a client certificate the same call is refused.
        try (InputStream ca = Files.newInputStream(certs.ca());
             FlightClient client = FlightClient.builder(allocator, Location.forGrpcTls("127.0.0.1", w.port()))
                     .trustedCertificates(ca).build()) {
            assertThatThrownBy(() -> {
                try (FlightStream stream = client.getStream(new Ticket(new byte[] {3}))) {
                    stream.next();
                }
            }).isInstanceOf(FlightRuntimeException.class);
        }
    }

    @Test
    void aMissingCaFileFailsTheBuildNamingTheKeyAndThePath() {
        Path missing = certDir.resolve("no-such-ca.pem");
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static", "rollcall.discovery.static.endpoints", "grpcs://127.0.0.1:1",
                "rollcall.policy.type", "exact", "rollcall.policy.exact.version", "1.0.0",
                "rollcall.probe.tls.ca", missing.toString()))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.tls.ca")
                .hasMessageContaining(missing.toString())
                .hasMessageContaining("does not exist")
                .satisfies(e -> assertThat(((ConfigurationException) e).key()).isEqualTo("rollcall.probe.tls.ca"));
    }

    @Test
    void aClientCertificateWithoutItsKeyFailsTheBuildNamingBothKeys() {
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static", "rollcall.discovery.static.endpoints", "grpcs://127.0.0.1:1",
                "rollcall.policy.type", "exact", "rollcall.policy.exact.version", "1.0.0",
                "rollcall.probe.tls.cert", certs.client().certificate().toString()))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.tls.key")
                .hasMessageContaining("rollcall.probe.tls.cert");
    }

    @Test
    void aFileThatIsNotWhatItsKeyNeedsFailsTheBuildWithoutQuotingIt() throws Exception {
        String keyText = Files.readString(certs.client().key());
        String keyBody = keyText.lines().filter(l -> !l.startsWith("-----")).findFirst().orElseThrow();
        // Swapped: the key where the certificate belongs, and the reverse.
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static", "rollcall.discovery.static.endpoints", "grpcs://127.0.0.1:1",
                "rollcall.policy.type", "exact", "rollcall.policy.exact.version", "1.0.0",
                "rollcall.probe.tls.cert", certs.client().key().toString(),
                "rollcall.probe.tls.key", certs.client().certificate().toString()))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.tls.cert")
                .hasMessageContaining(certs.client().key().toString())
                .hasMessageContaining("BEGIN CERTIFICATE")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(keyBody));

        Path garbage = Files.writeString(certDir.resolve("garbage-ca.pem"),
                "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static", "rollcall.discovery.static.endpoints", "grpcs://127.0.0.1:1",
                "rollcall.policy.type", "exact", "rollcall.policy.exact.version", "1.0.0",
                "rollcall.probe.tls.ca", garbage.toString()))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.tls.ca")
                .hasMessageContaining(garbage.toString());
    }

    @Test
    void aKeyThatIsNotTheCertificatesFailsTheBuildNamingBothFiles() {
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static", "rollcall.discovery.static.endpoints", "grpcs://127.0.0.1:1",
                "rollcall.policy.type", "exact", "rollcall.policy.exact.version", "1.0.0",
                "rollcall.probe.tls.cert", certs.client().certificate().toString(),
                "rollcall.probe.tls.key", certs.server().key().toString()))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.tls.key='" + certs.server().key() + "'")
                .hasMessageContaining("rollcall.probe.tls.cert='" + certs.client().certificate() + "'")
                .hasMessageContaining("another key");
        assertThatThrownBy(() -> RollcallWorker.builder().tls(certs.server().certificate(), certs.client().key())
                .start())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.worker.tls.key='" + certs.client().key() + "'")
                .hasMessageContaining("another key");
    }

    @Test
    void aWorkerWithBadTlsSettingsDoesNotStartAndSaysWhichKey() {
        assertThatThrownBy(() -> RollcallWorker.builder().config(RollcallConfig.of(Map.of(
                "rollcall.worker.tls.cert", certs.server().certificate().toString()))).start())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.worker.tls.key")
                .hasMessageContaining("rollcall.worker.tls.cert");
        assertThatThrownBy(() -> RollcallWorker.builder().config(RollcallConfig.of(Map.of(
                "rollcall.worker.tls.client-ca", certs.ca().toString()))).start())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.worker.tls.client-ca");
        Path missing = certDir.resolve("no-such-key.pem");
        assertThatThrownBy(() -> RollcallWorker.builder().tls(certs.server().certificate(), missing).start())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.worker.tls.key")
                .hasMessageContaining(missing.toString());
        assertThatThrownBy(() -> RollcallWorker.builder().config(RollcallConfig.of(Map.of(
                "rollcall.worker.tls.cert", certs.server().certificate().toString(),
                "rollcall.worker.tls.key", certs.server().key().toString(),
                "rollcall.worker.tls.client_ca", certs.ca().toString()))).start())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.worker.tls.client_ca")
                .hasMessageContaining("did you mean rollcall.worker.tls.client-ca");
    }

    /** Serves {@code 1..n} in one batch of an int column {@code n}, for a ticket holding the byte {@code n}. */
    private static final class NumbersProducer extends NoOpFlightProducer {
        private static final Schema SCHEMA = new Schema(List.of(Field.nullable("n", new ArrowType.Int(32, true))));
        private final BufferAllocator allocator;

        NumbersProducer(BufferAllocator allocator) {
            this.allocator = allocator;
        }

        @Override
        public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
            int count = ticket.getBytes()[0];
            try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
                IntVector n = (IntVector) root.getVector("n");
                n.allocateNew(count);
                for (int i = 0; i < count; i++) {
                    n.set(i, i + 1);
                }
                root.setRowCount(count);
                listener.start(root);
                listener.putNext();
                listener.completed();
            }
        }
    }
}
