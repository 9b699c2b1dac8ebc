package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.testkit.tls.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rollcall probe} and {@code rollcall workers} against real workers serving TLS and mutual
 * TLS: the commands honour the library's {@code rollcall.probe.tls.*} keys, and {@code probe}'s
 * {@code --tls-*} options.
 */
class TlsCommandsTest {

    @TempDir
    static Path dir;

    private static TestCertificates certs;
    private static RollcallWorker tls;
    private static RollcallWorker mtls;

    @BeforeAll
    static void startWorkers() throws Exception {
        certs = TestCertificates.generate(dir.resolve("certs"));
        tls = RollcallWorker.builder().version("1.4.0")
                .tls(certs.server().certificate(), certs.server().key()).start();
        mtls = RollcallWorker.builder().version("1.4.1")
                .tls(certs.server().certificate(), certs.server().key()).clientCa(certs.ca()).start();
    }

    @AfterAll
    static void stopWorkers() {
        if (tls != null) {
            tls.close();
        }
        if (mtls != null) {
            mtls.close();
        }
    }

    @Test
    void probeTrustsTheGivenCaAndPresentsTheGivenClientCertificate() {
        CommandRun.Finished run = CommandRun.run("probe", "--timeout", "10s",
                "--tls-ca", certs.ca().toString(),
                "--tls-cert", certs.client().certificate().toString(),
                "--tls-key", certs.client().key().toString(),
                tls.endpoint().url(), mtls.endpoint().url());

        assertThat(run.exit()).as(run.transcript()).isZero();
        assertThat(run.lines()).anySatisfy(l -> assertThat(l).startsWith(tls.endpoint().url()).contains("1.4.0", "ok"))
                .anySatisfy(l -> assertThat(l).startsWith(mtls.endpoint().url()).contains("1.4.1", "ok"));
    }

    @Test
    void probeReadsTheTlsKeysFromTheConfigFile() throws Exception {
        Path props = Files.writeString(dir.resolve("probe.properties"), String.join("\n",
                "rollcall.probe.tls.ca=" + certs.ca(),
                "rollcall.probe.tls.cert=" + certs.client().certificate(),
                "rollcall.probe.tls.key=" + certs.client().key(), ""));

        CommandRun.Finished run = CommandRun.run("probe", "--timeout", "10s", "--config", props.toString(),
                mtls.endpoint().url());

        assertThat(run.exit()).as(run.transcript()).isZero();
    }

    @Test
    void probeWithoutAClientCertificateReportsTheTlsFailure() {
        CommandRun.Finished run = CommandRun.run("probe", "--timeout", "10s", "--tls-ca", certs.ca().toString(),
                tls.endpoint().url(), mtls.endpoint().url());

        assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
        assertThat(run.lines()).anySatisfy(l -> assertThat(l).startsWith(mtls.endpoint().url())
                .contains("unreachable: UNAVAILABLE: TLS handshake failed:"));
        assertThat(run.lines()).anySatisfy(l -> assertThat(l).startsWith(tls.endpoint().url()).endsWith("ok"));
    }

    @Test
    void probeWithAMissingCaFileIsAConfigurationErrorNamingTheKeyAndPath() {
        Path missing = dir.resolve("missing-ca.pem");
        CommandRun.Finished run = CommandRun.run("probe", "--tls-ca", missing.toString(), tls.endpoint().url());

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("rollcall.probe.tls.ca", missing.toString(), "does not exist");
    }

    @Test
    void workersProbesOverMutualTlsWithTheConfiguredKeys() throws Exception {
        Path props = Files.writeString(dir.resolve("workers.properties"), String.join("\n",
                "rollcall.discovery.type=static",
                "rollcall.discovery.static.endpoints=" + tls.endpoint().url() + "," + mtls.endpoint().url(),
                "rollcall.policy.type=semver",
                "rollcall.policy.semver.range=^1.4",
                "rollcall.probe.timeout=10s",
                "rollcall.probe.tls.ca=" + certs.ca(),
                "rollcall.probe.tls.cert=" + certs.client().certificate(),
                "rollcall.probe.tls.key=" + certs.client().key(), ""));

        CommandRun.Finished run = CommandRun.run("workers", "--config", props.toString(), "--wait", "30s");

        assertThat(run.exit()).as(run.transcript()).isZero();
        assertThat(run.out()).contains(tls.endpoint().url(), mtls.endpoint().url());
        assertThat(run.lines()).filteredOn(l -> l.contains("grpcs://")).as(run.transcript()).hasSize(2)
                .allSatisfy(l -> assertThat(l).contains("compatible"));
    }
}
