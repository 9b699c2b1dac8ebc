package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RollcallConfigTest {

    @TempDir
    Path dir;

    private ClassLoader classpathWith(String properties) throws Exception {
        Path cp = Files.createDirectories(dir.resolve("classpath"));
        Files.writeString(cp.resolve("rollcall.properties"), properties);
        return new URLClassLoader(new URL[] {cp.toUri().toURL()}, null);
    }

    @Test
    void laterSourcesWinInTheDocumentedOrder() throws Exception {
        ClassLoader cp = classpathWith("""
                rollcall.probe.timeout=1s
                rollcall.probe.concurrency=1
                rollcall.probe.backoff.max=10s
                rollcall.probe.backoff.initial=1s
                """);
        Path file = dir.resolve("app.properties");
        Files.writeString(file, """
                rollcall.probe.concurrency=2
                rollcall.probe.backoff.max=20s
                rollcall.probe.backoff.initial=2s
                """);
        Properties system = new Properties();
        system.setProperty("rollcall.config", file.toString());
        system.setProperty("rollcall.probe.backoff.max", "30s");
        system.setProperty("rollcall.probe.backoff.initial", "3s");
        system.setProperty("java.version", "ignored: not ours");
        Map<String, String> env = Map.of("ROLLCALL_PROBE_BACKOFF_INITIAL", "4s", "PATH", "/bin");

        RollcallConfig config = RollcallConfig.load(system, env, cp);
        var probe = config.settings().scope("rollcall.probe.");

        assertThat(probe.duration("timeout", Duration.ZERO)).isEqualTo(Duration.ofSeconds(1));
        assertThat(probe.integer("concurrency", 0, 0, 10)).isEqualTo(2);
        assertThat(probe.duration("backoff.max", Duration.ZERO)).isEqualTo(Duration.ofSeconds(30));
        assertThat(probe.duration("backoff.initial", Duration.ZERO)).isEqualTo(Duration.ofSeconds(4));
        assertThat(config.origin("rollcall.probe.backoff.initial")).isEqualTo("environment ROLLCALL_PROBE_BACKOFF_INITIAL");
        assertThat(config.origin("rollcall.probe.concurrency")).isEqualTo(file.toString());
        assertThat(config.values()).doesNotContainKey("java.version");
    }

    @Test
    void configFileCanBeNamedByTheEnvironment() throws Exception {
        Path file = dir.resolve("env.properties");
        Files.writeString(file, "rollcall.policy.type=exact\n");
        RollcallConfig config = RollcallConfig.load(new Properties(), Map.of("ROLLCALL_CONFIG", file.toString()), null);
        assertThat(config.settings().string("rollcall.policy.type")).isEqualTo("exact");
    }

    @Test
    void environmentNameCoversDashesAndDots() {
        Map<String, String> env = Map.of("ROLLCALL_POLICY_SEMVER_INCLUDE_PRERELEASE", "true");
        RollcallConfig config = RollcallConfig.load(new Properties(), env, null);
        assertThat(config.settings().bool("rollcall.policy.semver.include-prerelease", false)).isTrue();
    }

    @Test
    void missingConfigFileNamesTheSettingThatPointsAtIt() {
        Properties system = new Properties();
        system.setProperty("rollcall.config", dir.resolve("nope.properties").toString());
        assertThatThrownBy(() -> RollcallConfig.load(system, Map.of(), null))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("-Drollcall.config=")
                .hasMessageContaining("nope.properties")
                .hasMessageContaining("no such file");
    }

    @Test
    void withOverridesEverySource() {
        RollcallConfig config = RollcallConfig.load(new Properties(), Map.of("ROLLCALL_PROBE_TIMEOUT", "9s"), null)
                .with("rollcall.probe.timeout", "3s");
        assertThat(config.settings().duration("rollcall.probe.timeout", Duration.ZERO)).isEqualTo(Duration.ofSeconds(3));
    }
}
