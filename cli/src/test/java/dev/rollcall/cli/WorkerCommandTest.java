package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Capability;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.otlp.OtlpReceiver;
import dev.rollcall.testkit.zookeeper.ZooKeeperServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rollcall worker}: in a JVM of its own (as {@code bin/rollcall} runs it) where signals matter,
 * in-process for the errors; a real resolver on loopback judges what it answers.
 */
class WorkerCommandTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Pattern LISTENING = Pattern.compile(
            "^worker (grpc://127\\.0\\.0\\.1:\\d+) version=(\\S+) instance=(\\S+)$");

    @TempDir
    Path dir;

    @Test
    void aResolverSeesItCompatibleWithItsVersionAndCapabilitiesAndSigtermDrainsItThenItExitsZero() throws Exception {
        Process process = javaRollcall("worker", "--version", "1.4.0", "--port", "0",
                "--capability", "udf:geo_distance", "--capability", "plan-protocol=3");
        List<String> lines = new ArrayList<>();
        CompletableFuture<Matcher> listening = read(process, lines);
        PushDiscovery discovery = new PushDiscovery();
        try (WorkerResolver resolver = WorkerResolver.builder().name("cli-worker").discovery(discovery)
                .policy(w -> w.version().equals("1.4.0") ? Verdict.accept() : Verdict.reject("not 1.4.0"))
                .fetchSchemas(false).build()) {
            Matcher line = listening.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            WorkerEndpoint endpoint = WorkerEndpoint.parse(line.group(1));
            assertThat(line.group(2)).isEqualTo("1.4.0");
            discovery.push(List.of(endpoint));

            FleetSnapshot compatible = resolver.awaitWorkers(1, WAIT);
            WorkerInfo seen = compatible.workers().get(0);
            assertThat(seen.version()).isEqualTo("1.4.0");
            assertThat(seen.instanceId()).isEqualTo(line.group(3));
            assertThat(seen.capabilities().get("udf:geo_distance")).isPresent();
            assertThat(seen.capabilities().get("plan-protocol")).map(Capability::version).contains("3");

            process.destroy(); // SIGTERM
            FleetSnapshot draining = resolver.await(s -> s.counts().draining() == 1, WAIT);
            assertThat(draining.workers()).as("a draining worker takes no new work").isEmpty();
            assertThat(process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).as(transcript(lines)).isTrue();
            assertThat(process.exitValue()).as(transcript(lines)).isZero();
        } finally {
            process.destroyForcibly();
        }
    }

    @Test
    void withAnOtlpUrlItPushesItsStateOnAResourceNamingItsVersionAndInstanceAndItsLastExportSaysDraining()
            throws Exception {
        try (OtlpReceiver receiver = OtlpReceiver.start()) {
            Path file = dir.resolve("rollcall.properties");
            Files.write(file, List.of("rollcall.metrics.otlp.url=" + receiver.url(),
                    "rollcall.metrics.otlp.step=1s"), StandardCharsets.UTF_8);
            Process process = javaRollcall("worker", "--version", "1.4.0", "--config", file.toString());
            List<String> lines = new ArrayList<>();
            CompletableFuture<Matcher> listening = read(process, lines);
            try {
                String instance = listening.get(WAIT.toSeconds(), TimeUnit.SECONDS).group(3);
                await().atMost(WAIT).until(() -> receiver.latestGauge("rollcall.worker.state",
                        Map.of("state", "serving")).isPresent());
                OtlpReceiver.GaugePoint serving = receiver.latestGauge("rollcall.worker.state",
                        Map.of("state", "serving")).orElseThrow();
                assertThat(serving.value()).isEqualTo(1.0);
                assertThat(serving.resource()).containsEntry("service.name", "rollcall-worker")
                        .containsEntry("service.version", "1.4.0")
                        .containsEntry("service.instance.id", instance);
                assertThat(receiver.latestGauge("rollcall.worker.coordinators.watching", Map.of()))
                        .map(OtlpReceiver.GaugePoint::value).contains(0.0);

                process.destroy(); // SIGTERM: drains, stops, then the registry's closing export
                assertThat(process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).as(transcript(lines)).isTrue();
                assertThat(process.exitValue()).as(transcript(lines)).isZero();
                assertThat(receiver.latestGauge("rollcall.worker.state", Map.of("state", "draining")))
                        .as("the last export, after the drain").map(OtlpReceiver.GaugePoint::value).contains(1.0);
                assertThat(receiver.latestGauge("rollcall.worker.state", Map.of("state", "serving")))
                        .map(OtlpReceiver.GaugePoint::value).contains(0.0);
            } finally {
                process.destroyForcibly();
            }
        }
    }

    @Test
    void anOtlpUrlThatIsNotHttpExitsTwoNamingTheKeyAndTheValue() throws Exception {
        Path file = dir.resolve("rollcall.properties");
        Files.write(file, List.of("rollcall.metrics.otlp.url=grpc://127.0.0.1:4317"), StandardCharsets.UTF_8);
        CommandRun.Finished run = CommandRun.run("worker", "--version", "1.4.0", "--config", file.toString());

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("rollcall.metrics.otlp.url", "grpc://127.0.0.1:4317");
        assertThat(run.err()).doesNotContain("\tat ");
    }

    @Test
    void aVersionWithAControlCharacterExitsTwoNamingTheOptionAndTheValueEscaped() {
        CommandRun.Finished run = CommandRun.run("worker", "--version", "1.4.0\u001b[2J");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("--version", "1.4.0\\u001b[2J", "control character");
        assertThat(run.err()).doesNotContain("\u001b");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aMalformedCapabilityExitsTwoNamingTheOption() {
        CommandRun.Finished run = CommandRun.run("worker", "--version", "1.4.0", "--capability", "plan-protocol=x");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("--capability", "plan-protocol");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aPortInUseExitsOneNamingTheAddress() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            CommandRun.Finished run = CommandRun.run("worker", "--version", "1.4.0",
                    "--port", Integer.toString(taken.getLocalPort()));

            assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
            assertThat(run.err()).contains("rollcall worker: ", "127.0.0.1:" + taken.getLocalPort());
            assertThat(run.err()).doesNotContain("\tat ");
            assertThat(run.out()).doesNotContain("grpc://");
        }
    }

    @Test
    void withRegisterTrueItRegistersWithTheConfiguredBackendAndLeavesItWhenStopped() throws Exception {
        try (ZooKeeperServer zk = ZooKeeperServer.start()) {
            Path file = dir.resolve("rollcall.properties");
            Files.write(file, List.of("rollcall.discovery.type=zookeeper",
                    "rollcall.discovery.zookeeper.connect=" + zk.connectString(),
                    "rollcall.policy.type=semver", "rollcall.policy.semver.range=^1.4",
                    "rollcall.worker.register=true"), StandardCharsets.UTF_8);
            CommandRun run = new CommandRun();
            CommandRun.Background worker = run.start("worker-registers", "worker", "--version", "1.4.2",
                    "--config", file.toString());
            try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.load(file))) {
                try {
                    FleetSnapshot registered = resolver.awaitWorkers(1, WAIT);
                    assertThat(registered.workers().get(0).version()).isEqualTo("1.4.2");
                    assertThat(run.out()).contains("worker " + registered.workers().get(0).endpoint().url() + " ");
                } finally {
                    worker.thread().interrupt();
                }
                assertThat(worker.exit().get(WAIT.toSeconds(), TimeUnit.SECONDS)).as(run.err()).isZero();
                resolver.await(s -> s.counts().candidates() == 0, WAIT);
            }
        }
    }

    @Test
    void inProcessItServesUntilInterruptedThenExitsZero() throws Exception {
        CommandRun run = new CommandRun();
        CommandRun.Background worker = run.start("worker", "worker", "--version", "2.0.0");
        try {
            await().atMost(WAIT).until(() -> LISTENING.matcher(run.out().strip()).matches()
                    || worker.exit().isDone());
            assertThat(run.out()).as(run.err()).startsWith("worker grpc://127.0.0.1:").contains(" version=2.0.0 ");
            assertThat(worker.exit()).as("still serving").isNotDone();
        } finally {
            worker.thread().interrupt();
        }
        assertThat(worker.exit().get(WAIT.toSeconds(), TimeUnit.SECONDS)).as(run.err()).isZero();
    }

    /** {@code rollcall args} in a JVM of its own on this module's class path, with Arrow's flags. */
    private static Process javaRollcall(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-opens=java.base/java.nio=ALL-UNNAMED"));
        if (Runtime.version().feature() >= 24) {
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), RollcallCommand.class.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    /** Reads the process's output into {@code lines}; completes with the line that says where it listens. */
    private static CompletableFuture<Matcher> read(Process process, List<String> lines) {
        CompletableFuture<Matcher> listening = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null) {
                    synchronized (lines) {
                        lines.add(line);
                    }
                    Matcher m = LISTENING.matcher(line);
                    if (m.matches()) {
                        listening.complete(m);
                    }
                }
            } catch (IOException closed) {
                // the process ended
            } finally {
                listening.completeExceptionally(new IllegalStateException("its output ended: " + transcript(lines)));
            }
        }, "rollcall-worker-output-" + process.pid());
        reader.setDaemon(true);
        reader.start();
        return listening;
    }

    private static String transcript(List<String> lines) {
        synchronized (lines) {
            return String.join("\n", lines);
        }
    }
}
