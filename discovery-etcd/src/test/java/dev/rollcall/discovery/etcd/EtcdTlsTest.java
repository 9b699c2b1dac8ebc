package dev.rollcall.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.local.etcd.EtcdServer;
import dev.rollcall.testkit.tls.TestCertificates;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tls.ca}, {@code tls.cert} and {@code tls.key} against a real etcd serving TLS, one that
 * requires client certificates ({@code --client-cert-auth}): with the right files discovery and
 * registration work; an untrusted server or a missing client certificate is a reported failure,
 * never an empty set.
 */
class EtcdTlsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    static Path dir;

    private static TestCertificates certs;
    private static EtcdServer server;

    @BeforeAll
    static void startEtcdWithMutualTls() {
        certs = TestCertificates.generate(dir);
        server = EtcdServer.start(new EtcdServer.Tls(certs.server().certificate(), certs.server().key(), certs.ca()));
    }

    @AfterAll
    static void stopEtcd() {
        if (server != null) {
            server.close();
        }
    }

    private static Map<String, String> keys(String... more) {
        Map<String, String> keys = new HashMap<>(Map.of("endpoints", server.endpoint(),
                "backoff.initial", "200ms", "backoff.max", "1s"));
        for (int i = 0; i < more.length; i += 2) {
            keys.put(more[i], more[i + 1]);
        }
        return keys;
    }

    @Test
    void watchesAndRegistersOverMutualTlsWithTheConfiguredFiles() {
        assertThat(server.endpoint()).startsWith("https://127.0.0.1:");
        Map<String, String> keys = keys("tls.ca", certs.ca().toString(),
                "tls.cert", certs.client().certificate().toString(), "tls.key", certs.client().key().toString());
        CandidateRecorder listener = new CandidateRecorder();
        WorkerInfo self = WorkerInfo.of(WorkerEndpoint.parse("grpcs://127.0.8.1:7001"), "1.0.0");
        try (WorkerDiscovery discovery = new EtcdWorkerDiscoveryProvider().create(Etcd.settings(keys));
             WorkerRegistration registration = new EtcdRegistrationProvider().create(self, Etcd.settings(keys))) {
            discovery.start(listener);
            await().atMost(WAIT).until(() -> Set.of().equals(listener.latest()));

            registration.start();

            await().atMost(WAIT).until(() -> Set.of(WorkerEndpoint.parse("grpcs://127.0.8.1:7001")
                    .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.0.0"))).equals(listener.latest()));
            assertThat(listener.errors()).isEmpty();
            assertThat(discovery.description()).contains("https://127.0.0.1:");
        }
    }

    @Test
    void withoutAClientCertificateEtcdRefusesAndTheFailureIsReported() {
        Map<String, String> keys = keys("tls.ca", certs.ca().toString());
        CandidateRecorder listener = new CandidateRecorder();
        try (WorkerDiscovery discovery = new EtcdWorkerDiscoveryProvider().create(Etcd.settings(keys))) {
            discovery.start(listener);
            await().atMost(WAIT).until(() -> !listener.errors().isEmpty());
            assertThat(listener.sets()).as("no set is published: an unreachable etcd does not mean no workers")
                    .isEmpty();
        }
        WorkerRegistration registration = new EtcdRegistrationProvider().create(
                WorkerInfo.of(WorkerEndpoint.of("127.0.8.2", 7001), "1.0.0"), Etcd.settings(keys));
        assertThatThrownBy(registration::start).isInstanceOf(RegistrationException.class)
                .hasMessageContaining(server.endpoint());
        registration.close();
    }

    @Test
    void anEtcdWhoseCertificateTheConfiguredCaDidNotSignIsRefused() {
        Map<String, String> keys = keys("tls.ca", certs.otherCa().toString(),
                "tls.cert", certs.client().certificate().toString(), "tls.key", certs.client().key().toString());
        CandidateRecorder listener = new CandidateRecorder();
        try (WorkerDiscovery discovery = new EtcdWorkerDiscoveryProvider().create(Etcd.settings(keys))) {
            discovery.start(listener);
            await().atMost(WAIT).until(() -> !listener.errors().isEmpty());
            assertThat(listener.sets()).isEmpty();
        }
    }

    @Test
    void aKeyFileThatIsNotAKeyFailsCreationNamingTheKeysButNotTheContent() {
        Map<String, String> keys = keys("tls.ca", certs.ca().toString(),
                "tls.cert", certs.client().certificate().toString(), "tls.key", certs.ca().toString());
        assertThatThrownBy(() -> new EtcdWorkerDiscoveryProvider().create(Etcd.settings(keys)))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.etcd.tls.cert")
                .hasMessageContaining("rollcall.discovery.etcd.tls.key");
    }
}
