package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.testkit.ThreadCensus;
import dev.rollcall.local.UnresponsiveWorker;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rollcall workers} in-process against a real loopback fleet, configured through a
 * properties file as a user would: 1.4.0 ×2, 1.5.1, 2.0.0 and one stopped worker, policy
 * {@code semver ^1.4}.
 */
class WorkersCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static WorkerFleet fleet;
    private static FleetWorker stopped;

    @TempDir
    static Path dir;

    private static Path config;

    @BeforeAll
    static void startFleet() throws IOException {
        fleet = WorkerFleet.start("1.4.0", "1.4.0", "1.5.1", "2.0.0", "1.4.0");
        stopped = fleet.worker(4);
        stopped.stop();
        config = writeConfig("rollcall.properties", fleet.endpointList(), "^1.4");
    }

    @AfterAll
    static void stopFleet() {
        fleet.close();
    }

    private static Path writeConfig(String name, String endpoints, String range, String... more) throws IOException {
        List<String> lines = new ArrayList<>(List.of(
                "rollcall.discovery.type=static",
                "rollcall.discovery.static.endpoints=" + endpoints,
                "rollcall.policy.type=semver",
                "rollcall.policy.semver.range=" + range));
        if (Arrays.stream(more).noneMatch(l -> l.startsWith("rollcall.probe.timeout="))) {
            // Generous: on a loaded 2-core machine a healthy worker's first answer can take seconds.
            lines.add("rollcall.probe.timeout=10s");
        }
        lines.addAll(List.of(more));
        Path file = dir.resolve(name);
        Files.write(file, lines, StandardCharsets.UTF_8);
        return file;
    }

    /** {@code rollcall workers args}, with a generous {@code --wait} unless the test gives one. */
    private static CommandRun.Finished workers(String... args) {
        List<String> all = new ArrayList<>(List.of("workers"));
        all.addAll(List.of(args));
        return CommandRun.run(withWait(all.toArray(String[]::new)));
    }

    private static String[] withWait(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        if (!all.contains("--wait")) {
            all.addAll(List.of("--wait", "30s"));
        }
        return all.toArray(String[]::new);
    }

    private static String url(int i) {
        return fleet.worker(i).endpoint().url();
    }

    @Test
    void table_showsEveryCandidateWithVersionInstanceAndStatus_thenTheSummary() {
        var run = workers("--config", config.toString());

        assertThat(run.exit()).as(run.transcript()).isZero();
        List<String> lines = run.lines();
        assertThat(lines.get(0)).as(run.transcript()).matches("  ENDPOINT +VERSION +INSTANCE +STATUS");
        for (int i = 0; i < 4; i++) {
            String row = "  " + url(i) + " ";
            String instance = " " + fleet.worker(i).instanceId().substring(0, FleetTable.SHORT_INSTANCE) + " ";
            assertThat(lines).as(run.transcript()).anyMatch(l -> l.startsWith(row) && l.contains(instance));
        }
        assertThat(lines).as(run.transcript())
                .anyMatch(l -> l.startsWith("  " + url(0) + " ") && l.contains(" 1.4.0 ") && l.endsWith(" compatible"))
                .anyMatch(l -> l.startsWith("  " + url(2) + " ") && l.contains(" 1.5.1 ") && l.endsWith(" compatible"))
                .anyMatch(l -> l.startsWith("  " + url(3) + " ") && l.contains(" 2.0.0 ")
                        && l.endsWith(" rejected: version '2.0.0' is outside ^1.4"))
                .anyMatch(l -> l.startsWith("  " + url(4) + " ") && l.matches(".* - +- +unreachable: UNAVAILABLE: .*"));
        assertThat(lines.get(lines.size() - 1)).as(run.transcript()).matches("snapshot \\d+: 5 candidates:"
                + " 3 compatible \\(1\\.4\\.0 x2, 1\\.5\\.1 x1\\), 1 rejected \\(2\\.0\\.0 x1\\), 1 unreachable;"
                + " policy semver \\^1\\.4");
        assertThat(lines).hasSize(1 + 5 + 1);
        assertThat(run.err()).as(run.transcript()).isEmpty();
    }

    @Test
    void json_parsesBackWithOneEntryPerCandidateAndTheSummary() throws IOException {
        var run = workers("--config", config.toString(), "--output", "json");

        assertThat(run.exit()).as(run.transcript()).isZero();
        JsonNode root = JSON.readTree(run.out());
        assertThat(root.get("snapshot").asLong()).isPositive();
        assertThat(root.get("policy").asText()).isEqualTo("semver ^1.4");
        assertThat(root.get("staleSince").isNull()).isTrue();
        assertThat(root.get("publishedAt").asText()).isNotEmpty();

        JsonNode workers = root.get("workers");
        assertThat(workers).hasSize(5);
        List<String> endpoints = new ArrayList<>();
        workers.forEach(w -> endpoints.add(w.get("endpoint").asText()));
        assertThat(endpoints).isSorted().containsExactlyInAnyOrderElementsOf(
                fleet.endpoints().stream().map(e -> e.url()).toList());
        for (JsonNode w : workers) {
            String endpoint = w.get("endpoint").asText();
            if (endpoint.equals(url(3))) {
                assertThat(w.get("status").asText()).isEqualTo("rejected");
                assertThat(w.get("version").asText()).isEqualTo("2.0.0");
                assertThat(w.get("reason").asText()).isEqualTo("version '2.0.0' is outside ^1.4");
                assertThat(w.get("instance").asText()).isEqualTo(fleet.worker(3).instanceId());
            } else if (endpoint.equals(url(4))) {
                assertThat(w.get("status").asText()).isEqualTo("unreachable");
                assertThat(w.get("version").isNull()).isTrue();
                assertThat(w.get("instance").isNull()).isTrue();
                assertThat(w.get("reason").asText()).startsWith("UNAVAILABLE: ");
            } else {
                assertThat(w.get("status").asText()).isEqualTo("compatible");
                assertThat(w.get("reason").isNull()).isTrue();
                assertThat(w.get("version").asText()).isIn("1.4.0", "1.5.1");
            }
        }
        JsonNode summary = root.get("summary");
        assertThat(JSON.convertValue(summary, new com.fasterxml.jackson.core.type.TypeReference<Map<String, Object>>() { })).containsAllEntriesOf(Map.of(
                "candidates", 5, "compatible", 3, "rejected", 1, "unreachable", 1, "pending", 0));
        assertThat(JSON.convertValue(summary.get("versions"), Map.class)).isEqualTo(Map.of(
                "compatible", Map.of("1.4.0", 2, "1.5.1", 1),
                "rejected", Map.of("2.0.0", 1)));
    }

    @Test
    void aDrainingWorker_showsHowManyCoordinatorsStillHoldIt_inTheTableAndInJson() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").host("127.0.0.1").port(0).start()) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", worker.port()).usePlaintext().build();
            try {
                for (String holder : List.of("coordinator-a", "coordinator-b")) { // two coordinators under leases
                    WorkerServiceGrpc.newStub(channel).watchWorkerInfo(
                            WorkerInfoRequest.newBuilder().setHolderId(holder).build(), new StreamObserver<>() {
                                @Override
                                public void onNext(WorkerInfoResponse value) {
                                }

                                @Override
                                public void onError(Throwable t) {
                                }

                                @Override
                                public void onCompleted() {
                                }
                            });
                }
                await().atMost(WAIT).until(() -> worker.coordinatorsHolding() == 2);
                worker.drain();
                String url = worker.endpoint().url();
                Path file = writeConfig("draining.properties", url, "^1.4");

                var table = workers("--config", file.toString());
                assertThat(table.exit()).as(table.transcript()).isZero();
                assertThat(table.lines()).as(table.transcript())
                        .anyMatch(l -> l.startsWith("  " + url + " ") && l.contains(" draining (2 holders): "));

                var json = workers("--config", file.toString(), "--output", "json");
                assertThat(json.exit()).as(json.transcript()).isZero();
                JsonNode w = JSON.readTree(json.out()).get("workers").get(0);
                assertThat(w.get("status").asText()).isEqualTo("draining");
                assertThat(w.get("holders").asInt()).as(json.out()).isEqualTo(2);
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void watch_printsAgainWhenTheFleetChanges_andStopsCleanlyWhenInterrupted() throws Exception {
        try (WorkerFleet small = WorkerFleet.start("1.4.0", "1.4.0")) {
            Path file = writeConfig("watch.properties", small.endpointList(), "^1.4");
            CommandRun run = new CommandRun();
            CommandRun.Background watch = run.start("watch",
                    withWait("workers", "--config", file.toString(), "--watch"));
            try {
                await().atMost(WAIT).until(() -> run.out().contains("2 compatible (1.4.0 x2)"));

                small.worker(1).restart("2.1.0");

                await().atMost(WAIT).until(() -> run.out().contains("1 compatible (1.4.0 x1), 1 rejected (2.1.0 x1)"));
                assertThat(run.outLines()).as(run.out())
                        .anyMatch(l -> l.contains(small.worker(1).endpoint().url())
                                && l.endsWith("rejected: version '2.1.0' is outside ^1.4"));
                assertThat(run.outLines().stream().filter(l -> l.startsWith("snapshot ")).count())
                        .as(run.out()).isGreaterThanOrEqualTo(2);
                assertThat(watch.exit()).as("still watching").isNotDone();
            } finally {
                watch.thread().interrupt();
            }
            assertThat(watch.exit().get(30, TimeUnit.SECONDS)).as(run.err()).isZero();
            // The resolver it built is closed: its threads end (each outlives its executor's termination by a moment).
            ThreadCensus.awaitNoneAlive(WAIT, "rollcall-resolver-cli", "rollcall-probe-cli", "rollcall-listeners-cli");
        }
    }

    @Test
    void watchWithCount_printsOneJsonDocumentPerLine_andStopsAfterN() throws Exception {
        try (WorkerFleet small = WorkerFleet.start("1.4.0")) {
            Path file = writeConfig("count.properties", small.endpointList(), "^1.4");
            CommandRun run = new CommandRun();
            CommandRun.Background watch = run.start("watch-count",
                    withWait("workers", "-c", file.toString(), "--watch", "--count", "2", "-o", "json"));

            await().atMost(WAIT).until(() -> run.out().contains("\n"));
            JsonNode first = JSON.readTree(run.outLines().get(0));
            assertThat(first.get("summary").get("compatible").asInt()).isEqualTo(1);

            small.worker(0).restart("1.6.0");

            assertThat(watch.exit().get(30, TimeUnit.SECONDS)).as(run.err()).isZero();
            List<String> lines = run.outLines();
            assertThat(lines).as(run.out()).hasSize(2);
            JsonNode second = JSON.readTree(lines.get(1));
            assertThat(second.get("snapshot").asLong()).isGreaterThan(first.get("snapshot").asLong());
            assertThat(second.get("workers").get(0)).isNotEqualTo(first.get("workers").get(0));
        }
    }

    @Test
    void configFile_givesWayToSystemProperties_likeTheLibrary() {
        String key = "rollcall.policy.semver.range";
        System.setProperty(key, "^2");
        try {
            var run = workers("--config", config.toString());

            assertThat(run.exit()).as(run.transcript()).isZero();
            assertThat(run.lines().get(run.lines().size() - 1)).as(run.transcript())
                    .contains("1 compatible (2.0.0 x1), 3 rejected (1.4.0 x2, 1.5.1 x1)")
                    .endsWith("policy semver ^2");
        } finally {
            System.clearProperty(key);
        }
    }

    @Test
    void configOption_winsOverRollcallConfigProperty_andLeavesItAsItWas() throws IOException {
        Path other = writeConfig("other.properties", fleet.endpointList(), "^1.5");
        System.setProperty("rollcall.config", other.toString());
        try {
            var run = workers("--config", config.toString());

            assertThat(run.exit()).as(run.transcript()).isZero();
            assertThat(run.out()).contains("policy semver ^1.4");
            assertThat(System.getProperty("rollcall.config")).isEqualTo(other.toString());
        } finally {
            System.clearProperty("rollcall.config");
        }
    }

    @Test
    void candidatesWithoutAVerdictWithinWait_exitOne_andSayWhatIsPending() throws IOException {
        try (UnresponsiveWorker hung = UnresponsiveWorker.start()) {
            Path file = writeConfig("hung.properties", hung.endpoint().url(), "^1.4", "rollcall.probe.timeout=60s");

            var run = workers("--config", file.toString(), "--wait", "300ms");

            assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
            assertThat(run.out()).as(run.transcript()).contains(hung.endpoint().url()).contains("pending")
                    .contains("1 candidate: 0 compatible, 0 rejected, 0 unreachable, 1 pending");
            assertThat(run.err()).as(run.transcript())
                    .contains("after 0.3s, 1 of 1 candidates still have no verdict (--wait waits longer)");
        }
    }

    @Test
    void progressFlag_reportsProbingOnStderr() {
        var run = workers("--config", config.toString(), "--progress");

        assertThat(run.exit()).as(run.transcript()).isZero();
        List<String> err = run.err().lines().toList();
        assertThat(err).as(run.transcript()).isNotEmpty().allMatch(l -> l.matches("probed [0-5]/5"));
        assertThat(err.get(err.size() - 1)).isEqualTo("probed 5/5");
        assertThat(run.out()).doesNotContain("probed");
    }

    @Test
    void malformedValueInTheFile_exitsTwoNamingTheKey() throws IOException {
        Path file = writeConfig("bad.properties", fleet.endpointList(), "^1.4", "rollcall.probe.timeout=2");

        var run = workers("--config", file.toString());

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).startsWith("rollcall workers: rollcall.probe.timeout='2': expected a duration");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void misspelledKey_exitsTwoNamingItAndTheNearestKnownKey() throws IOException {
        Path file = writeConfig("typo.properties", fleet.endpointList(), "^1.4", "rollcall.probe.timout=2s");

        var run = workers("--config", file.toString());

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("rollcall.probe.timout").contains("rollcall.probe.timeout");
    }

    @Test
    void malformedRangeInTheFile_exitsTwoNamingTheKey() throws IOException {
        Path file = writeConfig("range.properties", fleet.endpointList(), "^^1.4");

        var run = workers("--config", file.toString());

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("rollcall.policy.semver.range='^^1.4'");
    }

    @Test
    void discoveryTypeNoModuleProvides_exitsTwoNamingTheKey() throws IOException {
        Path file = dir.resolve("nosuch.properties");
        Files.writeString(file, "rollcall.discovery.type=nosuch\nrollcall.policy.type=semver\n"
                + "rollcall.policy.semver.range=^1.4\n");

        var run = workers("--config", file.toString());

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("rollcall.discovery.type").contains("nosuch").contains("static");
    }

    @Test
    void noConfigurationAtAll_exitsTwoAndSaysHowToGiveOne() {
        var run = workers();

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("is not set").contains("use --config FILE, -Drollcall.config=FILE or ROLLCALL_CONFIG");
    }

    @Test
    void configFileThatDoesNotExist_isAUsageErrorNamingTheOption() {
        var run = workers("--config", dir.resolve("missing.properties").toString());

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("Invalid value for option '--config'").contains("missing.properties")
                .contains("no such file");
    }

    @Test
    void unknownOutputFormat_isAUsageErrorNamingTheOption() {
        var run = workers("--config", config.toString(), "--output", "xml");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("--output").contains("table").contains("json");
    }

    @Test
    void countWithoutWatch_isAUsageError() {
        var run = workers("--config", config.toString(), "--count", "2");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("--count only applies with --watch");
    }

    @Test
    void protocolOption_none_judgesDiscoverysLabelsAloneAndNamesTheMissingOne() {
        // The static list carries no rollcall.version labels: with none, nobody is asked, so nobody has a version.
        var run = workers("--config", config.toString(), "--protocol", "none", "--output", "json");

        assertThat(run.exit()).as("settled: every candidate has its verdict " + run.transcript()).isZero();
        assertThat(run.out()).as(run.transcript()).contains("rollcall.version", "rollcall.probe.protocol")
                .doesNotContain("\"1.4.0\"");
    }

    @Test
    void protocolOption_thatNoJarProvidesExitsTwoListingTheKnownOnes() {
        var run = workers("--config", config.toString(), "--protocol", "trino");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("rollcall.probe.protocol='trino'", "known: datafusion-distributed");
    }
}
