package dev.rollcall.server.xds;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.testkit.tls.TestCertificates;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code xds:///} scheme, as a user runs it: a JVM of its own whose bootstrap file is the
 * one docs/xds.md's grpc-java section prints (only its {@code server_uri} replaced by the test
 * server's), named by {@code GRPC_XDS_BOOTSTRAP}. So the page cannot drift from what works.
 */
class GrpcJavaXdsBootstrapFileTest {

    private static final Path XDS_PAGE = Path.of("..", "docs", "xds.md");
    private static final Pattern SERVER_URI = Pattern.compile("\"server_uri\":\\s*\"[^\"]*\"");
    private static final String TRUST_STORE_PASSWORD = "changeit";

    @TempDir
    Path dir;

    @Test
    void aProcessWithThePagesBootstrapFileCallsOnlyTheCompatibleWorkers() throws Exception {
        try (XdsFleet fleet = XdsFleet.start()) {
            Run run = runAgainstMixedFleet(fleet, bootstraps().get(0), List.of(), 20);
            assertThat(run.exit).as("the process's exit; it printed %s", run.lines).isZero();
            assertThat(run.versions()).containsExactlyInAnyOrder("1.0.0", "1.1.0");
            assertThat(run.rejected.served()).as("calls that reached the rejected worker").isZero();
        }
    }

    /** grpc-java's {@code tls} channel credentials trust what the JVM's default trust store trusts. */
    @Test
    void aProcessWithThePagesTlsBootstrapFileAndTheServersCaInItsTrustStoreCallsOnlyTheCompatibleWorkers()
            throws Exception {
        TestCertificates certs = TestCertificates.generate(dir.resolve("certs"));
        try (XdsFleet fleet = XdsFleet.start(Map.of(
                "rollcall.serve.tls.cert", certs.server().certificate().toString(),
                "rollcall.serve.tls.key", certs.server().key().toString()))) {
            Run run = runAgainstMixedFleet(fleet, bootstraps().get(1), trustStore(certs.ca()), 20);
            assertThat(run.exit).as("the process's exit; it printed %s", run.lines).isZero();
            assertThat(run.versions()).containsExactlyInAnyOrder("1.0.0", "1.1.0");
            assertThat(run.rejected.served()).isZero();
        }
    }

    /**
     * As the page says: grpc-java's bootstrap gives its xDS client no client certificate, so a
     * server that requires one gives it no endpoints and its calls fail.
     */
    @Test
    void aServerThatRequiresAClientCertificateGivesGrpcJavasXdsClientNoWorker() throws Exception {
        TestCertificates certs = TestCertificates.generate(dir.resolve("certs"));
        try (XdsFleet fleet = XdsFleet.start(Map.of(
                "rollcall.serve.tls.cert", certs.server().certificate().toString(),
                "rollcall.serve.tls.key", certs.server().key().toString(),
                "rollcall.serve.tls.client-ca", certs.ca().toString()))) {
            Run run = runAgainstMixedFleet(fleet, bootstraps().get(1), trustStore(certs.ca()), 10);
            assertThat(run.exit).as("the process's exit; it printed %s", run.lines).isEqualTo(1);
            assertThat(run.lines).anyMatch(l -> l.startsWith("FAILED UNAVAILABLE") && l.contains("LDS resource fleet"));
            assertThat(run.versions()).isEmpty();
        }
    }

    /** Nor does it send a bearer token: a server with {@code rollcall.serve.token-file} gives it no endpoints. */
    @Test
    void aServerThatRequiresABearerTokenGivesGrpcJavasXdsClientNoWorker() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "s3cret-xds-token\n");
        try (XdsFleet fleet = XdsFleet.start(Map.of("rollcall.serve.token-file", token.toString()))) {
            Run run = runAgainstMixedFleet(fleet, bootstraps().get(0), List.of(), 10);
            assertThat(run.exit).as("the process's exit; it printed %s", run.lines).isEqualTo(1);
            assertThat(run.lines).anyMatch(l -> l.startsWith("FAILED UNAVAILABLE") && l.contains("LDS resource fleet"));
            assertThat(run.versions()).isEmpty();
        }
    }

    private record Run(int exit, List<String> lines, XdsFleet.Worker rejected) {
        Set<String> versions() {
            Set<String> versions = new HashSet<>();
            for (String line : lines) {
                if (line.startsWith("ANSWERED ")) {
                    versions.add(line.split(" ")[1]);
                }
            }
            return versions;
        }
    }

    /** Workers 1.0.0 and 1.1.0 (compatible) and 2.0.0 (rejected); the process dials {@code xds:///fleet}. */
    private Run runAgainstMixedFleet(XdsFleet fleet, String bootstrapFromThePage, List<String> jvmOptions,
                                     int callDeadlineSeconds) throws Exception {
        XdsFleet.Worker a = fleet.worker("1.0.0");
        XdsFleet.Worker b = fleet.worker("1.1.0");
        XdsFleet.Worker rejected = fleet.worker("2.0.0");
        fleet.list(a, b, rejected);
        fleet.await(State.COMPATIBLE, a, b);
        fleet.await(State.REJECTED, rejected);

        Path bootstrap = dir.resolve("xds-bootstrap.json");
        Files.writeString(bootstrap, SERVER_URI.matcher(bootstrapFromThePage)
                .replaceFirst(Matcher.quoteReplacement("\"server_uri\": \"127.0.0.1:" + fleet.port() + "\"")));
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), XdsFleetCaller.class.getName(),
                "fleet", "2", "20", Integer.toString(callDeadlineSeconds)));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("GRPC_XDS_BOOTSTRAP", bootstrap.toString());
        Process process = pb.start();
        try {
            List<String> lines = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                    .lines().toList();
            assertThat(process.waitFor(XdsFleet.WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            return new Run(process.exitValue(), lines, rejected);
        } finally {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** The JSON blocks of docs/xds.md's grpc-java section, in order. */
    static List<String> bootstraps() throws Exception {
        String page = Files.readString(XDS_PAGE, StandardCharsets.UTF_8);
        int start = page.indexOf("### grpc-java");
        int end = page.indexOf("\n### ", start + 1);
        assertThat(start).as("docs/xds.md has a grpc-java section").isNotNegative();
        Matcher json = Pattern.compile("```json\n(.*?)```", Pattern.DOTALL)
                .matcher(page.substring(start, end < 0 ? page.length() : end));
        List<String> blocks = new ArrayList<>();
        while (json.find()) {
            blocks.add(json.group(1));
        }
        assertThat(blocks).as("the grpc-java section's bootstraps: plaintext, then TLS").hasSize(2);
        assertThat(blocks.get(0)).contains("\"insecure\"");
        assertThat(blocks.get(1)).contains("\"tls\"");
        return blocks;
    }

    /** A PKCS#12 trust store holding {@code caPem}, as JVM options that make it the default one. */
    private List<String> trustStore(Path caPem) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        try (InputStream in = Files.newInputStream(caPem)) {
            store.setCertificateEntry("rollcall-ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        Path file = dir.resolve("trust.p12");
        try (OutputStream out = Files.newOutputStream(file)) {
            store.store(out, TRUST_STORE_PASSWORD.toCharArray());
        }
        return List.of("-Djavax.net.ssl.trustStore=" + file, "-Djavax.net.ssl.trustStoreType=PKCS12",
                "-Djavax.net.ssl.trustStorePassword=" + TRUST_STORE_PASSWORD);
    }
}
