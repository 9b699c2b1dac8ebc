package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rollcall.worker.RollcallWorker;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rollcall workers --require} in-process against three real workers on loopback, configured
 * through a properties file as a user would: one with {@code udf:geo_distance} and
 * {@code plan-protocol=3}, one with {@code udf:geo_distance} and {@code plan-protocol=2}, one with
 * neither.
 */
class WorkersRequireTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static RollcallWorker upgraded;
    private static RollcallWorker older;
    private static RollcallWorker plain;

    @TempDir
    static Path dir;

    private static Path config;

    @BeforeAll
    static void startWorkers() throws IOException {
        upgraded = RollcallWorker.builder().version("1.4.0").capabilities("udf:geo_distance", "plan-protocol=3").start();
        older = RollcallWorker.builder().version("1.4.0").capabilities("udf:geo_distance", "plan-protocol=2").start();
        plain = RollcallWorker.builder().version("1.4.0").start();
        config = dir.resolve("rollcall.properties");
        Files.write(config, List.of(
                "rollcall.discovery.type=static",
                "rollcall.discovery.static.endpoints=" + String.join(",", upgraded.endpoint().url(),
                        older.endpoint().url(), plain.endpoint().url()),
                "rollcall.policy.type=semver",
                "rollcall.policy.semver.range=^1.4",
                "rollcall.probe.timeout=10s"), StandardCharsets.UTF_8);
    }

    @AfterAll
    static void stopWorkers() {
        for (RollcallWorker w : new RollcallWorker[] {upgraded, older, plain}) {
            if (w != null) {
                w.close();
            }
        }
    }

    private static CommandRun.Finished workers(String... args) {
        List<String> all = new ArrayList<>(List.of("workers", "--config", config.toString(), "--wait", "30s"));
        all.addAll(List.of(args));
        return CommandRun.run(all.toArray(String[]::new));
    }

    private static String row(CommandRun.Finished run, RollcallWorker w) {
        return run.lines().stream().filter(l -> l.startsWith("  " + w.endpoint().url() + " ")).findFirst()
                .orElseThrow(() -> new AssertionError("no row for " + w.endpoint().url() + "\n" + run.transcript()));
    }

    @Test
    void require_showsOnlyTheWorkersThatMeetEveryRequirementAsCompatibleAndWhatEachOtherLacks() {
        var run = workers("--require", "udf:geo_distance", "--require", "plan-protocol>=3");

        assertThat(run.exit()).as(run.transcript()).isZero();
        assertThat(run.lines().get(0)).as(run.transcript()).matches("  ENDPOINT +VERSION +INSTANCE +CAPABILITIES +STATUS");
        assertThat(row(run, upgraded)).contains(" plan-protocol=3, udf:geo_distance ").endsWith(" compatible");
        assertThat(row(run, older)).endsWith(" lacks plan-protocol>=3 (has plan-protocol=2)");
        assertThat(row(run, plain)).matches(".* - +lacks udf:geo_distance");
        assertThat(run.lines().get(run.lines().size() - 1)).as(run.transcript())
                .contains("3 candidates: 1 compatible (1.4.0 x1)")
                .contains(", 2 lacking a requirement; requires udf:geo_distance, plan-protocol>=3; policy semver ^1.4");
        assertThat(run.err()).as(run.transcript()).isEmpty();
    }

    @Test
    void withoutRequire_everyCompatibleWorkerIsInUseAndTheTableShowsCapabilities() {
        var run = workers();

        assertThat(run.exit()).as(run.transcript()).isZero();
        assertThat(row(run, upgraded)).contains(" plan-protocol=3, udf:geo_distance ").endsWith(" compatible");
        assertThat(row(run, older)).contains(" plan-protocol=2, udf:geo_distance ").endsWith(" compatible");
        assertThat(row(run, plain)).matches(".* - +compatible");
        assertThat(run.lines().get(run.lines().size() - 1)).contains("3 compatible").doesNotContain("requires");
    }

    @Test
    void json_commaSeparatedRequirementsCarryTheRequirementsCapabilitiesAndStates() throws IOException {
        var run = workers("--require", "udf:geo_distance,plan-protocol>=3", "--output", "json");

        assertThat(run.exit()).as(run.transcript()).isZero();
        JsonNode root = JSON.readTree(run.out());
        assertThat(root.get("requirements")).extracting(JsonNode::asText)
                .containsExactly("udf:geo_distance", "plan-protocol>=3");
        Map<String, JsonNode> byEndpoint = new HashMap<>();
        root.get("workers").forEach(w -> byEndpoint.put(w.get("endpoint").asText(), w));
        JsonNode up = byEndpoint.get(upgraded.endpoint().url());
        assertThat(up.get("status").asText()).isEqualTo("compatible");
        assertThat(up.get("capabilities")).extracting(JsonNode::asText)
                .containsExactly("plan-protocol=3", "udf:geo_distance");
        JsonNode old = byEndpoint.get(older.endpoint().url());
        assertThat(old.get("status").asText()).isEqualTo("lacks_requirement");
        assertThat(old.get("reason").asText()).isEqualTo("lacks plan-protocol>=3 (has plan-protocol=2)");
        JsonNode none = byEndpoint.get(plain.endpoint().url());
        assertThat(none.get("capabilities")).isEmpty();
        assertThat(none.get("reason").asText()).isEqualTo("lacks udf:geo_distance");
        assertThat(root.get("summary").get("compatible").asInt()).isEqualTo(1);
        assertThat(root.get("summary").get("lacksRequirement").asInt()).isEqualTo(2);
    }

    @Test
    void aMalformedRequirementIsAUsageErrorNamingItEscaped() {
        var range = workers("--require", "plan-protocol>=banana");
        assertThat(range.exit()).as(range.transcript()).isEqualTo(2);
        assertThat(range.err()).contains("Invalid value for option '--require'")
                .contains("requirement 'plan-protocol>=banana'").contains("is not an npm range");
        assertThat(range.out()).isEmpty();

        var control = workers("--require", "udf:\u001b[2Jx");
        assertThat(control.exit()).as(control.transcript()).isEqualTo(2);
        assertThat(control.err()).contains("Invalid value for option '--require'").contains("udf:\\u001b[2Jx")
                .doesNotContain("\u001b");
    }
}
