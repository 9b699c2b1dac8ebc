package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.local.WorkerFleet;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.FleetWorker;
import dev.rollcall.protocol.v1.GetFleetRequest;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code rollcall serve} in-process against a real loopback fleet, configured through a file. */
class ServeCommandTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Pattern GRPC = Pattern.compile("(?m)^fleet api grpc://127\\.0\\.0\\.1:(\\d+)$");
    private static final Pattern HTTP = Pattern.compile(
            "(?m)^http (http://127\\.0\\.0\\.1:\\d+) \\(/readyz /healthz /metrics, console\\)$");

    @TempDir
    Path dir;

    private Path config(String endpoints, String... more) throws Exception {
        Path file = dir.resolve("rollcall.properties");
        List<String> lines = new ArrayList<>(List.of("rollcall.discovery.type=static",
                "rollcall.discovery.static.endpoints=" + endpoints,
                "rollcall.policy.type=semver", "rollcall.policy.semver.range=^1.4",
                "rollcall.probe.timeout=10s"));
        lines.addAll(List.of(more));
        Files.write(file, lines, StandardCharsets.UTF_8);
        return file;
    }

    @Test
    void servesTheFilesFleetOverGrpcAndHttpOnTheFilesPortsUntilInterrupted() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0", "2.0.0")) {
            // The ports come from the file: the resolver must leave rollcall.serve.* to the server.
            Path file = config(fleet.endpointList(), "rollcall.serve.port=0", "rollcall.serve.http-port=0");
            CommandRun run = new CommandRun();
            CommandRun.Background serve = run.start("serve", "serve", "--config", file.toString());
            ManagedChannel channel = null;
            try {
                await().atMost(WAIT).until(() -> HTTP.matcher(run.out()).find() || serve.exit().isDone());
                Matcher grpc = GRPC.matcher(run.out());
                Matcher http = HTTP.matcher(run.out());
                assertThat(grpc.find() && http.find()).as(run.out() + run.err()).isTrue();
                // xDS clients are told what to dial, on the fleet API's own port.
                assertThat(run.out()).contains("xds xds:///fleet on grpc://127.0.0.1:" + grpc.group(1) + "\n");

                channel = ManagedChannelBuilder.forAddress("127.0.0.1", Integer.parseInt(grpc.group(1))).usePlaintext()
                        .build();
                FleetServiceGrpc.FleetServiceBlockingStub fleetApi = FleetServiceGrpc.newBlockingStub(channel);
                int compatiblePort = fleet.worker(0).endpoint().port();
                int rejectedPort = fleet.worker(1).endpoint().port();
                await().atMost(WAIT).until(() -> {
                    FleetSnapshot s = fleetApi.withDeadlineAfter(10, TimeUnit.SECONDS)
                            .getFleet(GetFleetRequest.getDefaultInstance());
                    return s.getWorkersCount() == 1 && s.getExcludedCount() == 1;
                });
                FleetSnapshot snapshot = fleetApi.withDeadlineAfter(10, TimeUnit.SECONDS)
                        .getFleet(GetFleetRequest.getDefaultInstance());
                FleetWorker compatible = snapshot.getWorkers(0);
                assertThat(compatible.getUrl()).endsWith(":" + compatiblePort);
                assertThat(compatible.getVersion()).isEqualTo("1.4.0");
                assertThat(snapshot.getExcluded(0).getUrl()).endsWith(":" + rejectedPort);
                assertThat(snapshot.getExcluded(0).getVersion()).isEqualTo("2.0.0");

                HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
                HttpResponse<String> ready = client.send(HttpRequest.newBuilder(URI.create(http.group(1) + "/readyz"))
                        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
                assertThat(serve.exit()).as("still serving").isNotDone();
            } finally {
                if (channel != null) {
                    channel.shutdownNow();
                }
                serve.thread().interrupt();
            }
            assertThat(serve.exit().get(30, TimeUnit.SECONDS)).as(run.err()).isZero();
        }
    }

    @Test
    void thePortOptionsWinOverTheFilesKeys() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0");
             ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            // The file names a port that is in use; the options move both ports elsewhere.
            Path file = config(fleet.endpointList(), "rollcall.serve.port=" + taken.getLocalPort(),
                    "rollcall.serve.http-port=" + taken.getLocalPort());
            CommandRun run = new CommandRun();
            CommandRun.Background serve = run.start("serve-options", "serve", "--config", file.toString(),
                    "--port", "0", "--http-port", "0");
            try {
                await().atMost(WAIT).until(() -> HTTP.matcher(run.out()).find() || serve.exit().isDone());
                Matcher grpc = GRPC.matcher(run.out());
                assertThat(grpc.find()).as(run.out() + run.err()).isTrue();
                assertThat(Integer.parseInt(grpc.group(1))).isNotEqualTo(taken.getLocalPort());
            } finally {
                serve.thread().interrupt();
            }
            assertThat(serve.exit().get(30, TimeUnit.SECONDS)).as(run.err()).isZero();
        }
    }

    @Test
    void aPortInUseExitsOneNamingTheAddressAndItsKey() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0");
             ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            CommandRun.Finished run = CommandRun.run("serve", "--config", config(fleet.endpointList()).toString(),
                    "--port", Integer.toString(taken.getLocalPort()), "--http-port", "0");

            assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
            assertThat(run.err()).contains("rollcall serve: ", "127.0.0.1:" + taken.getLocalPort(), "rollcall.serve.port");
            assertThat(run.out()).doesNotContain("grpc://");
            assertThat(run.err()).doesNotContain("\tat ");
        }
    }

    @Test
    void aMisspeltServeKeyExitsTwoNamingTheKeyTheFileAndTheNearestKey() throws Exception {
        Path file = config("grpc://127.0.0.1:1", "rollcall.serve.prot=0");

        CommandRun.Finished run = CommandRun.run("serve", "--config", file.toString());

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("rollcall serve: ", "rollcall.serve.prot", file.toString(),
                "did you mean rollcall.serve.port?");
        assertThat(run.err()).doesNotContain("\tat ", "Exception");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aBadServeValueExitsTwoNamingTheKeyTheValueAndTheFile() throws Exception {
        Path file = config("grpc://127.0.0.1:1", "rollcall.serve.http-port=seventy");

        CommandRun.Finished run = CommandRun.run("serve", "--config", file.toString());

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("rollcall serve: ", "rollcall.serve.http-port='seventy'", file.toString());
        assertThat(run.err()).doesNotContain("\tat ", "Exception");
    }

    @Test
    void aMissingConfigurationFileExitsTwoNamingIt() {
        Path missing = dir.resolve("nowhere.properties");

        CommandRun.Finished run = CommandRun.run("serve", "--config", missing.toString());

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("--config", missing.toString(), "no such file");
        assertThat(run.err()).doesNotContain("\tat ");
    }

    @Test
    void aPortOptionOutsideTheRangeIsAUsageErrorNamingTheOption() throws Exception {
        CommandRun.Finished run = CommandRun.run("serve", "--config", config("grpc://127.0.0.1:1").toString(),
                "--http-port", "70000");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("Invalid value for option '--http-port': 70000 is outside 0..65535");
    }
}
