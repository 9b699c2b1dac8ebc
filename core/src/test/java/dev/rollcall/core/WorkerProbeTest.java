package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One-off probes: outcomes as values, over a real worker on loopback. */
class WorkerProbeTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    @Test
    void aWorkerThatAnswersIsAnAnsweredOutcome() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").start()) {
            ProbeOutcome outcome = WorkerProbe.defaults().probe(worker.endpoint(), TIMEOUT).get(10, TimeUnit.SECONDS);
            assertThat(outcome).isInstanceOfSatisfying(ProbeOutcome.Answered.class,
                    a -> assertThat(a.info().version()).isEqualTo("1.4.0"));
            assertThat(outcome.answered()).isTrue();
        }
    }

    @Test
    void aRefusedConnectionIsAFailedOutcomeNotAnException() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there now
        }
        WorkerEndpoint nobody = WorkerEndpoint.parse("grpc://127.0.0.1:" + port);
        ProbeOutcome outcome = WorkerProbe.defaults().probe(nobody, TIMEOUT).get(10, TimeUnit.SECONDS);
        assertThat(outcome).isInstanceOfSatisfying(ProbeOutcome.Failed.class, f -> {
            assertThat(f.code()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(f.reason()).startsWith("UNAVAILABLE").contains("127.0.0.1:" + port);
        });
    }

    @Test
    void theOldFutureOfInfoStillFailsWithTheStatusAndTheReason() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        assertThatThrownBy(() -> WorkerProbe.info(WorkerEndpoint.parse("grpc://127.0.0.1:" + port), TIMEOUT)
                .get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasRootCauseInstanceOf(StatusRuntimeException.class)
                .hasMessageContaining("UNAVAILABLE");
    }

    @Test
    void aMissingTrustFileFailsTheBuilderNamingItsKey() {
        assertThatThrownBy(() -> WorkerProbe.builder().trust(Path.of("/nonexistent/ca.pem")).build())
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("rollcall.probe.tls.ca")
                .hasMessageContaining("/nonexistent/ca.pem");
    }

    @Test
    void aConfiguredAnswerLimitIsChecked() {
        assertThatThrownBy(() -> WorkerProbe.builder()
                .config(RollcallConfig.of(Map.of("rollcall.probe.max-response-bytes", "12"))).build())
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("rollcall.probe.max-response-bytes");
    }

    @Test
    void hasVersionTellsMatchMismatchAndDownApart() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").start()) {
            assertThat(WorkerProbe.hasVersion(worker.endpoint().url(), "1.4.0", Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS))
                    .isTrue();
            assertThat(WorkerProbe.hasVersion(worker.endpoint(), "1.4.1", Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS))
                    .isFalse();
        }
        int freePort;
        try (ServerSocket s = new ServerSocket(0)) {
            freePort = s.getLocalPort();
        }
        var down = WorkerProbe.hasVersion(WorkerEndpoint.of("127.0.0.1", freePort), "1.4.0", Duration.ofSeconds(5));
        assertThatThrownBy(() -> down.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(StatusRuntimeException.class)
                .hasMessageContaining("UNAVAILABLE");
    }

    @Test
    void hasVersionRejectsAMalformedEndpoint() {
        assertThatThrownBy(() -> WorkerProbe.hasVersion("grpc://host", "1.0.0", Duration.ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("grpc://host")
                .hasMessageContaining("no port");
    }
}
