package dev.rollcall.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.api.registration.WorkerRegistrationProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Configuration is checked before anything touches the network, and bad keys are named. */
class EtcdSettingsTest {

    private static final String SCOPE = "rollcall.discovery.etcd.";
    private static final WorkerInfo SELF = WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 7001), "1.0.0");

    @TempDir
    Path dir;

    private static Map<String, String> keys(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    private static ConfigurationException discoveryFails(Map<String, String> keys) {
        return (ConfigurationException) org.assertj.core.api.Assertions.catchThrowable(
                () -> new EtcdWorkerDiscoveryProvider().create(Etcd.settings(keys)));
    }

    @Test
    void bothProvidersAreFoundByServiceLoaderAsTypeEtcd() {
        assertThat(ServiceLoader.load(WorkerDiscoveryProvider.class).stream().map(p -> p.get().type()))
                .contains("etcd");
        assertThat(ServiceLoader.load(WorkerRegistrationProvider.class).stream().map(p -> p.get().type()))
                .contains("etcd");
    }

    @Test
    void refusesAKeepaliveUnder100MsAndAPageSizeOutside1To10000NamingTheKey() {
        assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1", "keepalive-time", "50ms")))
                .hasMessageContaining(SCOPE + "keepalive-time").hasMessageContaining("100ms");
        assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1", "page-size", "0")))
                .hasMessageContaining(SCOPE + "page-size");
        assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1", "page-size", "10001")))
                .hasMessageContaining(SCOPE + "page-size");
    }

    @Test
    void appliesTheDocumentedDefaults() {
        EtcdSettings s = EtcdSettings.read(Etcd.settings(keys("endpoints", "http://127.0.0.1")));

        assertThat(s.endpointList()).isEqualTo("http://127.0.0.1:2379");
        assertThat(s.prefix()).isEqualTo("/rollcall/workers/");
        assertThat(s.connectTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(s.requestTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.backoffInitial()).isEqualTo(Duration.ofMillis(500));
        assertThat(s.keepaliveTime()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.pageSize()).isEqualTo(500);
        assertThat(s.silenceBound()).as("the README's bound for a silent etcd").isEqualTo(Duration.ofSeconds(10));
        assertThat(s.backoffMax()).isEqualTo(Duration.ofSeconds(10));
        assertThat(s.tls()).isFalse();
        assertThat(s.authenticated()).isFalse();
    }

    @Test
    void requiresEndpoints() {
        assertThat(discoveryFails(keys())).hasMessageContaining(SCOPE + "endpoints is not set")
                .extracting(ConfigurationException::key).isEqualTo(SCOPE + "endpoints");
    }

    @Test
    void rejectsEndpointsThatAreNotHttpUrlsNamingTheBadItem() {
        for (String bad : new String[] {"127.0.0.1:2379", "grpc://127.0.0.1:2379", "http://127.0.0.1:2379/v3",
                "http://user@127.0.0.1:2379", "http://"}) {
            String shown = bad.replace("user@", "***@"); // user info is never shown
            assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1:2379," + bad)))
                    .as(bad).hasMessageContaining(SCOPE + "endpoints").hasMessageContaining("'" + shown + "' is not one")
                    .hasMessageNotContaining("user@");
        }
    }

    /** etcd takes no user info in its URLs; a password written there anyway is named by neither the value nor the item. */
    @Test
    void aPasswordWrittenIntoAnEndpointIsNeverShown() {
        for (String secret : new String[] {"pa/ss", "p?ss", "p#ss", "p@ss", "p%40ss", "p:ss"}) {
            ConfigurationException e = discoveryFails(keys("endpoints",
                    "http://127.0.0.1:2379,http://root:" + secret + "@127.0.0.2:2379"));
            assertThat(e).as(secret).hasMessageContaining(SCOPE + "endpoints")
                    .hasMessageContaining("'http://***@127.0.0.2:2379' is not one")
                    .hasMessageNotContaining("ss@").hasMessageNotContaining("root");
        }
    }

    @Test
    void rejectsAMixOfHttpAndHttps() {
        assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1:2379,https://127.0.0.2:2379")))
                .hasMessageContaining("all use http:// or all use https://");
    }

    @Test
    void rejectsTimeoutsAndBackoffThatMakeNoSense() {
        assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1:2379", "request-timeout", "0s")))
                .hasMessageContaining(SCOPE + "request-timeout");
        assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1:2379", "connect-timeout", "5")))
                .hasMessageContaining(SCOPE + "connect-timeout");
        assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1:2379", "backoff.initial", "5s",
                "backoff.max", "1s"))).hasMessageContaining(SCOPE + "backoff.max");
    }

    @Test
    void rejectsAPrefixWithWhiteSpace() {
        assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1:2379", "prefix", "/rollcall/my workers/")))
                .hasMessageContaining(SCOPE + "prefix");
    }

    @Test
    void requiresUserAndPasswordTogetherAndNeverShowsThePassword() {
        ConfigurationException e = discoveryFails(keys("endpoints", "http://127.0.0.1:2379", "password", "s3cr3t-pw"));
        assertThat(e).hasMessageContaining(SCOPE + "user is not set").hasMessageNotContaining("s3cr3t-pw");
        assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1:2379", "user", "rollcall")))
                .hasMessageContaining(SCOPE + "password is not set");

        EtcdSettings s = EtcdSettings.read(Etcd.settings(keys("endpoints", "http://127.0.0.1:2379", "user", "rollcall",
                "password", "s3cr3t-pw")));
        assertThat(s.authenticated()).isTrue();
        assertThat(s.toString()).doesNotContain("s3cr3t-pw");
        assertThat(new EtcdWorkerDiscovery(s).description()).doesNotContain("s3cr3t-pw");
    }

    /**
     * A password over http:// to another machine is readable by anyone on the path: refused when the
     * settings are read, before any client exists (no connection is attempted; the addresses below
     * are never contacted), on both the discovery and the registration side.
     */
    @Test
    void refusesAPasswordOverPlaintextToAHostThatIsNotLoopbackNamingTheKeyTheAddressAndTheWayOut() {
        for (String endpoints : new String[] {"http://10.0.0.2:2379", "http://127.0.0.1:2379,http://etcd.example.com",
                "http://127.evil.example:2379", "http://[2001:db8::1]:2379", "http://127.0.0.1.nip.io:2379"}) {
            Map<String, String> keys = keys("endpoints", endpoints, "user", "rollcall", "password", "s3cr3t-pw");
            ConfigurationException e = discoveryFails(keys);
            assertThat(e).as(endpoints).isNotNull();
            assertThat(e.key()).isEqualTo(SCOPE + "password");
            assertThat(e).hasMessageContaining(SCOPE + "password is set but " + SCOPE + "endpoints has the plaintext"
                            + " endpoint " + endpoints.substring(endpoints.lastIndexOf(',') + 1))
                    .hasMessageContaining("https://").hasMessageContaining(SCOPE + "allow-plaintext-credentials=true")
                    .hasMessageNotContaining("s3cr3t-pw");
            assertThatThrownBy(() -> new EtcdRegistrationProvider().create(SELF, Etcd.settings(keys)))
                    .isInstanceOf(ConfigurationException.class).hasMessageContaining(SCOPE + "allow-plaintext-credentials");
        }
    }

    @Test
    void acceptsAPasswordOverPlaintextToLoopbackOverHttpsOrWhenAllowed() {
        for (String endpoints : new String[] {"http://127.0.0.1:2379", "http://localhost:2379", "http://[::1]:2379",
                "http://127.3.2.1:2379,http://LOCALHOST:2380", "http://[0:0:0:0:0:0:0:1]:2379",
                "https://etcd.example.com:2379,https://10.0.0.2:2379"}) {
            EtcdSettings s = EtcdSettings.read(Etcd.settings(keys("endpoints", endpoints, "user", "rollcall",
                    "password", "s3cr3t-pw")));
            assertThat(s.authenticated()).as(endpoints).isTrue();
        }
        EtcdSettings allowed = EtcdSettings.read(Etcd.settings(keys("endpoints", "http://10.0.0.2:2379", "user",
                "rollcall", "password", "s3cr3t-pw", "allow-plaintext-credentials", "true")));
        assertThat(allowed.authenticated()).isTrue();
        assertThat(allowed.tls()).isFalse();
        // Without credentials there is nothing to leak: plaintext to anywhere is as before.
        assertThat(EtcdSettings.read(Etcd.settings(keys("endpoints", "http://10.0.0.2:2379"))).authenticated())
                .isFalse();
        assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1:2379", "allow-plaintext-credentials", "yes")))
                .hasMessageContaining(SCOPE + "allow-plaintext-credentials='yes'").hasMessageContaining("true or false");
    }

    @Test
    void requiresTlsFilesToExistAndHttpsEndpoints() throws IOException {
        Path missing = dir.resolve("missing-ca.pem");
        assertThat(discoveryFails(keys("endpoints", "https://127.0.0.1:2379", "tls.ca", missing.toString())))
                .hasMessageContaining(SCOPE + "tls.ca").hasMessageContaining("does not exist");

        Path notPem = Files.writeString(dir.resolve("ca.pem"), "not a certificate");
        assertThat(discoveryFails(keys("endpoints", "https://127.0.0.1:2379", "tls.ca", notPem.toString())))
                .hasMessageContaining(SCOPE + "tls.ca").hasMessageContaining("PEM");

        assertThat(discoveryFails(keys("endpoints", "http://127.0.0.1:2379", "tls.ca", notPem.toString())))
                .hasMessageContaining("https:// URLs, since " + SCOPE + "tls.ca is set");

        Path cert = Files.writeString(dir.resolve("client.pem"), "x");
        assertThat(discoveryFails(keys("endpoints", "https://127.0.0.1:2379", "tls.cert", cert.toString())))
                .hasMessageContaining(SCOPE + "tls.key is not set");
    }

    @Test
    void httpsWithoutFilesUsesTheSystemTrustStore() {
        EtcdSettings s = EtcdSettings.read(Etcd.settings(keys("endpoints", "https://etcd.example.com")));
        assertThat(s.tls()).isTrue();
        assertThat(s.endpointList()).isEqualTo("https://etcd.example.com:2379");
    }

    @Test
    void registrationChecksItsOwnKeysWithoutContactingEtcd() {
        // Nothing listens on port 1: create() must not try.
        WorkerRegistration r = new EtcdRegistrationProvider().create(SELF, Etcd.settings(keys(
                "endpoints", "http://127.0.0.1:1", "registration.ttl", "2500ms", "registration.id", "worker-7")));
        assertThat(r.description()).isEqualTo("etcd key /rollcall/workers/worker-7 (lease 3 s) at http://127.0.0.1:1");
        r.close();

        assertThatThrownBy(() -> new EtcdRegistrationProvider().create(SELF, Etcd.settings(keys(
                "endpoints", "http://127.0.0.1:1", "registration.ttl", "1s"))))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(SCOPE + "registration.ttl='1s'")
                .hasMessageContaining("at least 2s");
        assertThatThrownBy(() -> new EtcdRegistrationProvider().create(SELF, Etcd.settings(keys(
                "endpoints", "http://127.0.0.1:1", "registration.id", "a/b"))))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(SCOPE + "registration.id='a/b'");
        assertThatThrownBy(() -> new EtcdRegistrationProvider().create(SELF, Etcd.settings(keys(
                "registration.ttl", "5s"))))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(SCOPE + "endpoints is not set");
    }

    @Test
    void registrationIdDefaultsToHostAndPort() {
        assertThat(EtcdRegistrationProvider.defaultId(WorkerEndpoint.parse("grpc://Worker-1.example.com:7001")))
                .isEqualTo("worker-1.example.com_7001");
        assertThat(EtcdRegistrationProvider.defaultId(WorkerEndpoint.parse("grpcs://[::1]:7443"))).isEqualTo("::1_7443");
        assertThat(EtcdRegistrationProvider.validId("::1_7443")).isTrue();
    }
}
