package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rollcall.local.WorkerFleet;
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

/** {@code rollcall console} in-process against a real loopback fleet, configured through a file. */
class ConsoleCommandTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Pattern URL = Pattern.compile("Rollcall console: (http://\\S+/) ");

    @TempDir
    Path dir;

    private Path config(WorkerFleet fleet, String... more) throws Exception {
        Path file = dir.resolve("rollcall.properties");
        List<String> lines = new ArrayList<>(List.of("rollcall.discovery.type=static",
                "rollcall.discovery.static.endpoints=" + fleet.endpointList(),
                "rollcall.policy.type=semver", "rollcall.policy.semver.range=^1.4",
                "rollcall.probe.timeout=10s"));
        lines.addAll(List.of(more));
        Files.write(file, lines, StandardCharsets.UTF_8);
        return file;
    }

    @Test
    void printsTheUrlServesTheFleetAndStopsWhenInterrupted() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0", "2.0.0")) {
            Path file = config(fleet, "rollcall.console.max-clients=2");
            CommandRun run = new CommandRun();
            CommandRun.Background console = run.start("console", "console", "--config", file.toString(), "--port", "0");
            try {
                await().atMost(WAIT).until(() -> URL.matcher(run.out()).find() || console.exit().isDone());
                Matcher m = URL.matcher(run.out());
                assertThat(m.find()).as(run.out() + run.err()).isTrue();
                URI page = URI.create(m.group(1));
                assertThat(page.getHost()).isEqualTo("127.0.0.1");
                HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
                ObjectMapper json = new ObjectMapper();
                await().atMost(WAIT).until(() -> {
                    JsonNode fleetJson = json.readTree(http.send(HttpRequest.newBuilder(page.resolve("/api/fleet"))
                            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body());
                    return fleetJson.get("counts").get("compatible").asInt() == 1
                            && fleetJson.get("counts").get("rejected").asInt() == 1;
                });
                HttpResponse<String> html = http.send(HttpRequest.newBuilder(page).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(html.body()).contains("<title>Rollcall console</title>");
                assertThat(console.exit()).as("still serving").isNotDone();
            } finally {
                console.thread().interrupt();
            }
            assertThat(console.exit().get(30, TimeUnit.SECONDS)).as(run.err()).isZero();
        }
    }

    @Test
    void aNonLoopbackBindIsRefusedWithoutAllowRemote() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0")) {
            CommandRun.Finished run = CommandRun.run("console", "--config", config(fleet).toString(),
                    "--bind", "0.0.0.0", "--port", "0");

            assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
            assertThat(run.err()).contains("rollcall.console.allow-remote=true").contains("0.0.0.0");
            assertThat(run.out()).doesNotContain("http://");
        }
    }

    @Test
    void aMissingConfigurationFileNamedByRollcallConfigExitsTwoNamingItWithoutAStackTrace() {
        Path missing = dir.resolve("nowhere.properties");
        System.setProperty("rollcall.config", missing.toString());
        try {
            CommandRun.Finished run = CommandRun.run("console", "--port", "0");

            assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
            assertThat(run.err()).contains(missing.toString(), "no such file").doesNotContain("\tat ");
            assertThat(run.out()).doesNotContain("http://");
        } finally {
            System.clearProperty("rollcall.config");
        }
    }
}
