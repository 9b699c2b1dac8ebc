package dev.rollcall.discovery.consul;

import dev.rollcall.testkit.CandidateRecorder;
import static dev.rollcall.discovery.consul.ConsulScenarios.P;
import static dev.rollcall.discovery.consul.ConsulScenarios.SEEN;
import static dev.rollcall.discovery.consul.ConsulScenarios.urls;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.testkit.consul.ConsulStandIn;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * HTTPS to the agent with the PEM files Consul's tools use; the material in {@code tls/} was made
 * by {@code tls/generate.sh}.
 */
class ConsulTlsTest {

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    static Path tls(String name) {
        try {
            return Path.of(ConsulTlsTest.class.getResource("/tls/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The stand-in's side: server.p12 for its certificate; the test CA for client certificates. */
    private ConsulStandIn httpsStandIn(boolean requireClientCertificate) throws Exception {
        KeyStore server = KeyStore.getInstance("PKCS12");
        try (InputStream in = ConsulTlsTest.class.getResourceAsStream("/tls/server.p12")) {
            server.load(in, "changeit".toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(server, "changeit".toCharArray());
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream in = ConsulTlsTest.class.getResourceAsStream("/tls/ca.pem")) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        ConsulStandIn standIn = ConsulStandIn.builder().https(context)
                .requireClientCertificate(requireClientCertificate).start();
        toClose.add(standIn);
        return standIn;
    }

    private CandidateRecorder watch(ConsulStandIn standIn, Map<String, String> tlsKeys) {
        Map<String, String> keys = new HashMap<>();
        keys.put(P + "address", standIn.address());
        keys.put(P + "service", "workers");
        keys.put(P + "backoff.initial", "100ms");
        keys.put(P + "rate-limit.interval", "100ms");
        keys.put(P + "backoff.max", "500ms");
        tlsKeys.forEach((k, v) -> keys.put(P + k, v));
        ConsulWorkerDiscovery d = (ConsulWorkerDiscovery) new ConsulWorkerDiscoveryProvider()
                .create(Settings.of(keys).scope(P));
        toClose.add(d);
        CandidateRecorder listener = new CandidateRecorder();
        d.start(listener);
        return listener;
    }

    @Test
    void watchesOverHttpsTrustingTheConfiguredCa() throws Exception {
        ConsulStandIn standIn = httpsStandIn(false);
        CandidateRecorder listener = watch(standIn, Map.of("tls.ca", tls("ca.pem").toString()));

        await().atMost(SEEN).until(() -> urls().equals(listener.latestUrls()));
        assertThat(standIn.address()).startsWith("https://");
    }

    @Test
    void refusesAnAgentWhoseCertificateItDoesNotTrust() throws Exception {
        ConsulStandIn standIn = httpsStandIn(false);
        CandidateRecorder untrusted = watch(standIn, Map.of("tls.ca", tls("other-ca.pem").toString()));
        CandidateRecorder jdkDefault = watch(standIn, Map.of());

        await().atMost(SEEN).until(() -> !untrusted.errors().isEmpty() && !jdkDefault.errors().isEmpty());
        assertThat(untrusted.errors().get(0).getMessage()).contains("cannot reach it").contains("certification path");
        assertThat(untrusted.sets()).isEmpty();
        assertThat(jdkDefault.sets()).isEmpty();
        assertThat(standIn.requests()).as("no request got through").isEmpty();
    }

    @Test
    void presentsAClientCertificateWithEcRsaOrPkcs8Keys() throws Exception {
        ConsulStandIn standIn = httpsStandIn(true);
        String ca = tls("ca.pem").toString();
        CandidateRecorder ecSec1 = watch(standIn, Map.of("tls.ca", ca, "tls.cert", tls("client.pem").toString(),
                "tls.key", tls("client-key.pem").toString()));
        CandidateRecorder pkcs8 = watch(standIn, Map.of("tls.ca", ca, "tls.cert", tls("client.pem").toString(),
                "tls.key", tls("client-key-pkcs8.pem").toString()));
        CandidateRecorder rsaPkcs1 = watch(standIn, Map.of("tls.ca", ca, "tls.cert", tls("client-rsa.pem").toString(),
                "tls.key", tls("client-rsa-key.pem").toString()));
        CandidateRecorder noCertificate = watch(standIn, Map.of("tls.ca", ca));

        await().atMost(SEEN).until(() -> urls().equals(ecSec1.latestUrls()) && urls().equals(pkcs8.latestUrls())
                && urls().equals(rsaPkcs1.latestUrls()));
        await().atMost(SEEN).until(() -> !noCertificate.errors().isEmpty());
        assertThat(noCertificate.sets()).isEmpty();
    }

    @Test
    void registersOverMutualTls() throws Exception {
        ConsulStandIn standIn = httpsStandIn(true);
        Map<String, String> keys = Map.of(P + "address", standIn.address(), P + "service", "workers",
                P + "tls.ca", tls("ca.pem").toString(), P + "tls.cert", tls("client.pem").toString(),
                P + "tls.key", tls("client-key.pem").toString());
        WorkerRegistration registration = new ConsulRegistrationProvider().create(
                WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 7001), "1.0.0"), Settings.of(keys).scope(P));
        toClose.add(registration);

        registration.start();

        assertThat(standIn.services()).containsKey("workers-127.0.0.1-7001");
        registration.close();
        assertThat(standIn.services()).isEmpty();
    }

    @Test
    void namesTheKeyOfAnUnusableTlsFile() {
        Map<String, String> keys = new HashMap<>(Map.of(P + "address", "https://127.0.0.1:8501", P + "service", "w",
                P + "tls.cert", tls("client.pem").toString(), P + "tls.key", tls("ca.pem").toString()));
        assertThatThrownBy(() -> new ConsulWorkerDiscoveryProvider().create(Settings.of(keys).scope(P)))
                .isInstanceOfSatisfying(ConfigurationException.class, e -> assertThat(e.key()).isEqualTo(P + "tls.key"))
                .hasMessageContaining("found CERTIFICATE");

        keys.put(P + "tls.key", tls("client-rsa-key.pem").toString());
        assertThatThrownBy(() -> new ConsulWorkerDiscoveryProvider().create(Settings.of(keys).scope(P)))
                .isInstanceOfSatisfying(ConfigurationException.class, e -> assertThat(e.key()).isEqualTo(P + "tls.key"))
                .hasMessageContaining("does not fit the certificate");

        keys.put(P + "tls.key", tls("client-key.pem").toString());
        keys.put(P + "tls.ca", tls("client-key.pem").toString());
        assertThatThrownBy(() -> new ConsulWorkerDiscoveryProvider().create(Settings.of(keys).scope(P)))
                .isInstanceOfSatisfying(ConfigurationException.class, e -> assertThat(e.key()).isEqualTo(P + "tls.ca"));
    }
}
