package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.core.internal.ProbeTls;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.testkit.FinestLogCapture;
import dev.rollcall.testkit.consul.ConsulStandIn;
import dev.rollcall.local.etcd.EtcdServer;
import dev.rollcall.testkit.tls.TestCertificates;
import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Secrets never leak: realistic runs with an etcd password, a Consul ACL token and TLS private keys
 * configured (workers registering over TLS and mutual TLS, {@code rollcall workers} and
 * {@code rollcall probe} in-process, resolvers built from the same files), the failures too (wrong
 * password, wrong token, a key file that is not one, swapped certificate and key, a bad value next
 * to a secret, a misspelt secret key), and exact drain's holder ids (a coordinator that also
 * discovers a worker recording the id it is sent, and a holder of a real worker whose id the test
 * chose, releases refused and accepted). Everything is captured: every log line at the finest level
 * (SLF4J at TRACE, java.util.logging at ALL), the {@code toString()} of every configuration,
 * resolver, discovery, registration, worker and snapshot, every exception with its causes, and
 * the commands' stdout and stderr. No secret may appear in any of it.
 */
class SecretsNeverLeakTest {

    private static final String ETCD_PASSWORD = "etcd-pw-" + UUID.randomUUID();
    private static final String WRONG_PASSWORD = "etcd-wrong-" + UUID.randomUUID();
    private static final String CONSUL_TOKEN = "consul-acl-" + UUID.randomUUID();
    private static final String WRONG_TOKEN = "consul-wrong-" + UUID.randomUUID();
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** The holder id of a coordinator the test plays, watching and releasing a real worker. */
    private static final String HOLDER_ID = "holder-" + UUID.randomUUID();
    /** Holder ids the resolver sent, as a worker recorded them: filled by {@link HolderIdFlows}. */
    private static final Map<String, String> SENT_HOLDER_IDS = new java.util.concurrent.ConcurrentHashMap<>();
    /** A line of gRPC's HTTP/2 frame logger: {@code [id: 0x..., L:/127.0.0.1:1 - R:/127.0.0.1:2] OUTBOUND DATA: ...}. */
    private static final java.util.regex.Pattern FRAME_DUMP = java.util.regex.Pattern.compile(
            "\\] (IN|OUT)BOUND [A-Z_]+: streamId=");

    @TempDir
    static Path dir;

    private static TestCertificates certs;
    private static EtcdServer etcd;
    private static ConsulStandIn consul;

    @BeforeAll
    static void startBackends() throws Exception {
        certs = TestCertificates.generate(dir.resolve("certs"));
        etcd = EtcdServer.start();
        try (Client admin = Client.builder().endpoints(etcd.endpoint()).build()) {
            Auth auth = admin.getAuthClient();
            auth.userAdd(bytes("root"), bytes(ETCD_PASSWORD)).get(10, TimeUnit.SECONDS);
            auth.roleAdd(bytes("root")).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("root"), bytes("root")).get(10, TimeUnit.SECONDS);
            auth.authEnable().get(10, TimeUnit.SECONDS);
        }
        consul = ConsulStandIn.builder().aclToken(CONSUL_TOKEN).https(consulTls()).requireClientCertificate(true)
                .start();
    }

    @AfterAll
    static void stopBackends() {
        if (consul != null) {
            consul.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    @Test
    void noSecretAppearsInLogsToStringsExceptionsOrCommandOutput() throws Exception {
        CapturedText seen = new CapturedText();
        String log;
        int julRecords;
        try (FinestLogCapture capture = new FinestLogCapture()) {
            etcdFlows(seen);
            consulFlows(seen);
            configurationErrors(seen);
            HolderIdFlows.run(seen, capture, HOLDER_ID, SENT_HOLDER_IDS);
            log = capture.text();
            julRecords = capture.julRecordCount();
        }

        // Kept for whoever wants to read what was searched (target/ is the module's build directory).
        Path kept = Files.createDirectories(Path.of("target", "secrets-never-leak"));
        Files.writeString(kept.resolve("log.txt"), log);
        Files.writeString(kept.resolve("seen.txt"), seen.text());
        assertThat(julRecords).as("java.util.logging captured at its finest (gRPC, HttpClient)").isPositive();
        assertThat(log).as("SLF4J captured at DEBUG and below").contains("DEBUG");
        assertThat(log).as("the wrong etcd password was logged as a failure").containsIgnoringCase("authentication");
        assertThat(seen.text()).contains("rollcall.probe.tls.key", "rollcall.discovery.etcd.pasword",
                "TLS handshake failed");
        // gRPC's HTTP/2 frame logger (io.grpc.netty.NettyClientHandler at DEBUG) dumps every frame's
        // bytes in hex, etcd's Authenticate request with the password included: a wire dump, documented
        // in docs/configuration.md; the hex form is searched everywhere else.
        String withoutFrameDumps = log.lines().filter(l -> !FRAME_DUMP.matcher(l).find())
                .collect(Collectors.joining("\n"));
        assertThat(withoutFrameDumps.length()).isLessThan(log.length());
        for (Map.Entry<String, String> secret : secrets().entrySet()) {
            if (log.contains(secret.getValue())) {
                fail(secret.getKey() + " appears in the logs:\n" + around(log, secret.getValue()));
            }
            String hex = hex(secret.getValue());
            if (withoutFrameDumps.contains(hex)) {
                fail(secret.getKey() + " appears hex-encoded in the logs:\n" + around(withoutFrameDumps, hex));
            }
            if (seen.text().contains(secret.getValue())) {
                fail(secret.getKey() + " appears in a toString(), an exception or the commands' output:\n"
                        + around(seen.text(), secret.getValue()));
            }
        }
        // Holder ids travel on the wire by design: gRPC's frame dumps may hold them, nothing else.
        Map<String, String> holderIds = new LinkedHashMap<>(SENT_HOLDER_IDS);
        holderIds.put("a holder id of a coordinator the test played", HOLDER_ID);
        assertThat(SENT_HOLDER_IDS).as("a holder id the resolver sent").isNotEmpty();
        for (Map.Entry<String, String> id : holderIds.entrySet()) {
            if (withoutFrameDumps.contains(id.getValue())) {
                fail(id.getKey() + " appears in the logs:\n" + around(withoutFrameDumps, id.getValue()));
            }
            if (seen.text().contains(id.getValue())) {
                fail(id.getKey() + " appears in a toString(), an exception or the commands' output:\n"
                        + around(seen.text(), id.getValue()));
            }
        }
        assertThat(log).as("exact drain's lines were written: the coordinator's refusal, the worker's close")
                .contains("holds nothing there").contains("every coordinator let go");
    }

    /** A worker registering in etcd with the password and serving mutual TLS; the commands and a resolver reading the same file. */
    private void etcdFlows(CapturedText seen) throws Exception {
        Path good = properties("etcd.properties", etcdKeys(ETCD_PASSWORD));
        Path wrong = properties("etcd-wrong.properties", etcdKeys(WRONG_PASSWORD));
        RollcallConfig config = RollcallConfig.fromFile(good);
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").config(config).start()) {
            seen.add("worker", worker, worker.info(), worker.endpoint(), config, config.settings());
            worker.registration().ifPresent(r -> seen.add("registration", r, r.description()));
            assertThat(worker.endpoint().url()).startsWith("grpcs://");

            CommandRun.Finished workers = CommandRun.run("workers", "--config", good.toString(), "--wait", "30s");
            seen.add("rollcall workers (etcd)", workers.transcript());
            assertThat(workers.exit()).as(workers.transcript()).isZero();
            assertThat(workers.out()).contains(worker.endpoint().url());

            CommandRun.Finished json = CommandRun.run("workers", "--config", good.toString(), "--output", "json");
            seen.add("rollcall workers --output json (etcd)", json.transcript());

            CommandRun.Finished probe = CommandRun.run("probe", "--config", good.toString(), "--timeout", "10s",
                    worker.endpoint().url());
            seen.add("rollcall probe (etcd file)", probe.transcript());
            assertThat(probe.exit()).as(probe.transcript()).isZero();

            CommandRun.Finished noClientCert = CommandRun.run("probe", "--tls-ca", certs.ca().toString(),
                    "--timeout", "10s", worker.endpoint().url());
            seen.add("rollcall probe without a client certificate", noClientCert.transcript());
            assertThat(noClientCert.exit()).isEqualTo(1);

            try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.fromFile(good))) {
                FleetSnapshot s = resolver.awaitWorkers(1, WAIT);
                seen.add("resolver (etcd)", resolver, resolver.discoveryDescription(),
                        resolver.policy(), s, s.statuses());
            }

            CommandRun.Finished refused = CommandRun.run("workers", "--config", wrong.toString(), "--wait", "3s");
            seen.add("rollcall workers with a wrong etcd password", refused.transcript());
            assertThat(refused.exit()).as(refused.transcript()).isEqualTo(1);
        }
        try (RollcallWorker refused = RollcallWorker.builder().version("1.4.0")
                .config(RollcallConfig.fromFile(wrong)).start()) {
            fail("registered with a wrong etcd password: " + refused);
        } catch (RuntimeException e) {
            seen.add("worker registering with a wrong etcd password", e);
        }
    }

    private static Map<String, String> etcdKeys(String password) {
        Map<String, String> keys = new LinkedHashMap<>();
        keys.put("rollcall.discovery.type", "etcd");
        keys.put("rollcall.discovery.etcd.endpoints", etcd.endpoint());
        keys.put("rollcall.discovery.etcd.prefix", "/rollcall/secrets/");
        keys.put("rollcall.discovery.etcd.user", "root");
        keys.put("rollcall.discovery.etcd.password", password);
        keys.put("rollcall.discovery.etcd.backoff.initial", "200ms");
        keys.put("rollcall.discovery.etcd.backoff.max", "1s");
        keys.put("rollcall.discovery.etcd.request-timeout", "3s");
        keys.put("rollcall.discovery.etcd.registration.ttl", "5s");
        keys.putAll(tlsKeys());
        return keys;
    }

    /** The same, through the Consul stand-in: HTTPS with a client certificate, and the ACL token. */
    private void consulFlows(CapturedText seen) throws Exception {
        Path good = properties("consul.properties", consulKeys(CONSUL_TOKEN));
        Path wrong = properties("consul-wrong.properties", consulKeys(WRONG_TOKEN));
        RollcallConfig config = RollcallConfig.fromFile(good);
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.1").config(config).start()) {
            seen.add("worker", worker, worker.info(), config);
            worker.registration().ifPresent(r -> seen.add("registration", r, r.description()));

            CommandRun.Finished workers = CommandRun.run("workers", "--config", good.toString(), "--wait", "30s");
            seen.add("rollcall workers (consul)", workers.transcript());
            assertThat(workers.exit()).as(workers.transcript()).isZero();
            assertThat(workers.out()).contains(worker.endpoint().url());

            try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.fromFile(good))) {
                FleetSnapshot s = resolver.awaitWorkers(1, WAIT);
                seen.add("resolver (consul)", resolver, resolver.discoveryDescription(), s);
            }

            CommandRun.Finished refused = CommandRun.run("workers", "--config", wrong.toString(), "--wait", "3s");
            seen.add("rollcall workers with a wrong consul token", refused.transcript());
            assertThat(refused.exit()).as(refused.transcript()).isEqualTo(1);
        }
        try (RollcallWorker refused = RollcallWorker.builder().version("1.4.1")
                .config(RollcallConfig.fromFile(wrong)).start()) {
            fail("registered with a wrong consul token: " + refused);
        } catch (RuntimeException e) {
            seen.add("worker registering with a wrong consul token", e);
        }
    }

    private static Map<String, String> consulKeys(String token) {
        Map<String, String> keys = new LinkedHashMap<>();
        keys.put("rollcall.discovery.type", "consul");
        keys.put("rollcall.discovery.consul.address", consul.address());
        keys.put("rollcall.discovery.consul.service", "rollcall-secrets");
        keys.put("rollcall.discovery.consul.token", token);
        keys.put("rollcall.discovery.consul.tls.ca", certs.ca().toString());
        keys.put("rollcall.discovery.consul.tls.cert", certs.client().certificate().toString());
        keys.put("rollcall.discovery.consul.tls.key", certs.client().key().toString());
        keys.put("rollcall.discovery.consul.wait", "1s");
        keys.put("rollcall.discovery.consul.registration.check-ttl", "2s");
        keys.putAll(tlsKeys());
        return keys;
    }

    /** Probe and worker TLS, with the worker keys in the same file (one file for both sides). */
    private static Map<String, String> tlsKeys() {
        Map<String, String> keys = new LinkedHashMap<>();
        keys.put("rollcall.policy.type", "semver");
        keys.put("rollcall.policy.semver.range", "^1.4");
        keys.put("rollcall.probe.timeout", "10s");
        keys.put("rollcall.probe.tls.ca", certs.ca().toString());
        keys.put("rollcall.probe.tls.cert", certs.client().certificate().toString());
        keys.put("rollcall.probe.tls.key", certs.client().key().toString());
        keys.put("rollcall.worker.register", "true");
        keys.put("rollcall.worker.tls.cert", certs.server().certificate().toString());
        keys.put("rollcall.worker.tls.key", certs.server().key().toString());
        keys.put("rollcall.worker.tls.client-ca", certs.ca().toString());
        return keys;
    }

    /** Bad configuration next to secrets: each must fail naming keys and paths, never a secret. */
    private void configurationErrors(CapturedText seen) throws Exception {
        Map<String, String> etcdBase = etcdKeys(ETCD_PASSWORD);
        Path notAFile = Files.createDirectories(dir.resolve("key-is-a-directory.pem"));

        expectConfigurationError(seen, "probe key is a directory",
                with(etcdBase, "rollcall.probe.tls.key", notAFile.toString()));
        expectConfigurationError(seen, "probe certificate and key swapped",
                with(with(etcdBase, "rollcall.probe.tls.cert", certs.client().key().toString()),
                        "rollcall.probe.tls.key", certs.client().certificate().toString()));
        expectConfigurationError(seen, "bad value next to the password",
                with(etcdBase, "rollcall.discovery.etcd.request-timeout", "fast"));
        expectConfigurationError(seen, "misspelt password key",
                with(etcdBase, "rollcall.discovery.etcd.pasword", WRONG_PASSWORD));
        expectConfigurationError(seen, "etcd tls key is the CA", with(with(with(with(etcdBase,
                "rollcall.discovery.etcd.endpoints", "https://127.0.0.1:2379"),
                "rollcall.discovery.etcd.tls.ca", certs.ca().toString()),
                "rollcall.discovery.etcd.tls.cert", certs.client().key().toString()),
                "rollcall.discovery.etcd.tls.key", certs.client().key().toString()));
        // A password written into a URL where none belongs, holding the characters that ended the old mask.
        expectConfigurationError(seen, "etcd password written into its endpoint URL", with(etcdBase,
                "rollcall.discovery.etcd.endpoints", "http://root:" + ETCD_PASSWORD + "@127.0.0.1:2379"));
        expectConfigurationError(seen, "etcd password with '/' written into its endpoint URL", with(etcdBase,
                "rollcall.discovery.etcd.endpoints", "http://root:x/" + ETCD_PASSWORD + "@127.0.0.1:2379"));
        expectConfigurationError(seen, "consul token written into its address", with(consulKeys(CONSUL_TOKEN),
                "rollcall.discovery.consul.address", "http://acl:" + CONSUL_TOKEN + "?x@127.0.0.1:8500"));
        expectConfigurationError(seen, "a password in a static endpoint", Map.of("rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", "grpc://w:" + WRONG_PASSWORD + "#x@127.0.0.1:1",
                "rollcall.policy.type", "semver", "rollcall.policy.semver.range", "^1.4"));
        expectConfigurationError(seen, "bad consul address next to the token",
                with(consulKeys(CONSUL_TOKEN), "rollcall.discovery.consul.address", "ftp://127.0.0.1:8500"));
        expectConfigurationError(seen, "consul key and certificate swapped", with(with(consulKeys(CONSUL_TOKEN),
                "rollcall.discovery.consul.tls.cert", certs.client().key().toString()),
                "rollcall.discovery.consul.tls.key", certs.client().certificate().toString()));

        try (RollcallWorker w = RollcallWorker.builder().tls(certs.server().key(), certs.server().certificate())
                .start()) {
            fail("a worker started with its certificate and key swapped: " + w);
        } catch (ConfigurationException e) {
            seen.add("worker certificate and key swapped", e);
        }
        seen.add("probe TLS settings", ProbeTls.read(RollcallConfig.of(tlsKeys()).settings().scope("rollcall.probe."),
                null, null, null, null));

        CommandRun.Finished swapped = CommandRun.run("probe", "--tls-ca", certs.ca().toString(),
                "--tls-cert", certs.client().key().toString(), "--tls-key", certs.client().certificate().toString(),
                "grpcs://127.0.0.1:1");
        seen.add("rollcall probe with certificate and key swapped", swapped.transcript());
        assertThat(swapped.exit()).as(swapped.transcript()).isEqualTo(2);

        Path badFile = properties("bad.properties", with(etcdBase, "rollcall.discovery.etcd.request-timeout", "fast"));
        CommandRun.Finished bad = CommandRun.run("workers", "--config", badFile.toString());
        seen.add("rollcall workers with a bad value next to the password", bad.transcript());
        assertThat(bad.exit()).as(bad.transcript()).isEqualTo(2);
        Path typo = properties("typo.properties", with(etcdBase, "rollcall.discovery.etcd.pasword", WRONG_PASSWORD));
        CommandRun.Finished misspelt = CommandRun.run("workers", "--config", typo.toString());
        seen.add("rollcall workers with a misspelt password key", misspelt.transcript());
        assertThat(misspelt.exit()).as(misspelt.transcript()).isEqualTo(2);
    }

    private static void expectConfigurationError(CapturedText seen, String what, Map<String, String> keys) {
        RollcallConfig config = RollcallConfig.of(keys);
        seen.add(what + " (config)", config);
        try (WorkerResolver resolver = WorkerResolver.fromConfig(config)) {
            fail(what + ": the resolver was built: " + resolver);
        } catch (ConfigurationException e) {
            seen.add(what, e);
        }
    }

    private static Map<String, String> with(Map<String, String> keys, String key, String value) {
        Map<String, String> copy = new LinkedHashMap<>(keys);
        copy.put(key, value);
        return copy;
    }

    /** Every secret, by name: the passwords and tokens, and each base64 line of each private key. */
    private static Map<String, String> secrets() throws Exception {
        Map<String, String> secrets = new LinkedHashMap<>();
        secrets.put("the etcd password", ETCD_PASSWORD);
        secrets.put("the wrong etcd password", WRONG_PASSWORD);
        secrets.put("the Consul ACL token", CONSUL_TOKEN);
        secrets.put("the wrong Consul token", WRONG_TOKEN);
        for (Path key : List.of(certs.client().key(), certs.server().key(), certs.otherClient().key())) {
            List<String> lines = Files.readAllLines(key).stream().filter(l -> !l.startsWith("-----")).toList();
            assertThat(lines).isNotEmpty();
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).length() >= 16) {
                    secrets.put("line " + (i + 1) + " of the private key " + key.getFileName(), lines.get(i));
                }
            }
        }
        return secrets;
    }

    private static String hex(String text) {
        StringBuilder out = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            out.append(String.format("%02x", b));
        }
        return out.toString();
    }

    private static String around(String text, String secret) {
        int at = text.indexOf(secret);
        return text.substring(Math.max(0, at - 600), Math.min(text.length(), at + secret.length() + 200));
    }

    private static Path properties(String name, Map<String, String> keys) throws Exception {
        return Files.writeString(dir.resolve(name), keys.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue().replace("\\", "\\\\"))
                .collect(Collectors.joining("\n", "", "\n")));
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** The stand-in's HTTPS: the server certificate, and client certificates signed by the test CA. */
    private static SSLContext consulTls() throws Exception {
        CertificateFactory x509 = CertificateFactory.getInstance("X.509");
        Certificate serverCert;
        Certificate ca;
        try (InputStream in = Files.newInputStream(certs.server().certificate())) {
            serverCert = x509.generateCertificate(in);
        }
        try (InputStream in = Files.newInputStream(certs.ca())) {
            ca = x509.generateCertificate(in);
        }
        String pem = Files.readAllLines(certs.server().key()).stream().filter(l -> !l.startsWith("-----"))
                .collect(Collectors.joining());
        PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(
                new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
        char[] password = "changeit".toCharArray();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("server", key, password, new Certificate[] {serverCert});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, password);
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", ca);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return context;
    }

    /** What the test saw outside the logs: {@code toString()}s, exceptions with their causes, command transcripts. */
    static final class CapturedText {
        private final List<String> parts = new ArrayList<>();

        void add(String label, Object... things) {
            for (Object thing : things) {
                String text = thing instanceof Throwable t ? stackTrace(t) : String.valueOf(thing);
                synchronized (parts) {
                    parts.add("== " + label + "\n" + text);
                }
            }
        }

        String text() {
            synchronized (parts) {
                return String.join("\n", parts);
            }
        }

        static String stackTrace(Throwable t) {
            java.io.StringWriter out = new java.io.StringWriter();
            t.printStackTrace(new java.io.PrintWriter(out));
            return out.toString();
        }
    }
}
