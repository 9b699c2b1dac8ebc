package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.plugin.PinnedPolicyPlugin;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rollcall workers --classpath}: a user's own policy, compiled here into a jar that is not on
 * the command's class path, selected by {@code rollcall.policy.type} as a coordinator would select it.
 */
class WorkersPluginClassPathTest {

    private static WorkerFleet fleet;

    @TempDir
    static Path dir;

    private static Path config;
    private static Path pluginJar;

    @BeforeAll
    static void startFleetAndBuildThePlugin() throws IOException {
        fleet = WorkerFleet.start("1.4.0", "2.0.0");
        config = dir.resolve("rollcall.properties");
        Files.write(config, List.of(
                "rollcall.discovery.type=static",
                "rollcall.discovery.static.endpoints=" + fleet.endpointList(),
                "rollcall.policy.type=pinned",
                "rollcall.policy.pinned.version=2.0.0",
                "rollcall.probe.timeout=10s"), StandardCharsets.UTF_8);
        pluginJar = PinnedPolicyPlugin.jar(Files.createDirectories(dir.resolve("plugins")));
    }

    @AfterAll
    static void stopFleet() {
        fleet.close();
    }

    @Test
    void aCustomPolicyInAJarOnTheClassPathOptionIsFoundAndApplied() {
        var run = CommandRun.run("workers", "--config", config.toString(), "--classpath", pluginJar.toString(),
                "--wait", "30s");

        assertThat(run.exit()).as(run.transcript()).isZero();
        assertThat(run.lines()).as(run.transcript())
                .anyMatch(l -> l.startsWith("  " + fleet.worker(1).endpoint().url() + " ") && l.endsWith(" compatible"))
                .anyMatch(l -> l.startsWith("  " + fleet.worker(0).endpoint().url() + " ")
                        && l.endsWith(" rejected: not the pinned version 2.0.0"));
        assertThat(run.lines().get(run.lines().size() - 1)).endsWith("; policy pinned 2.0.0");
    }

    @Test
    void aDirectoryWildcardStandsForEveryJarInIt() {
        var run = CommandRun.run("workers", "--config", config.toString(),
                "--classpath", pluginJar.getParent() + "/*", "--wait", "30s");

        assertThat(run.exit()).as(run.transcript()).isZero();
        assertThat(run.out()).contains("policy pinned 2.0.0");
    }

    @Test
    void withoutThePluginTheUnknownPolicyTypeIsAConfigurationError() {
        var run = CommandRun.run("workers", "--config", config.toString(), "--wait", "30s");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("rollcall.policy.type").contains("pinned");
    }

    @Test
    void aMissingClassPathEntryIsAUsageErrorNamingTheOptionAndTheEntry() {
        var run = CommandRun.run("workers", "--config", config.toString(), "--classpath", "/no/such/policy.jar");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("Invalid value for option '--classpath': '/no/such/policy.jar': no such file");
    }
}
