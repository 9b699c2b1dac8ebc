package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.testkit.WorkerFleet;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rollcall workers --classpath}: a user's own policy, compiled here into a jar that is not on
 * the command's class path, selected by {@code rollcall.policy.type} as a coordinator would select it.
 */
class WorkersPluginClassPathTest {

    private static final String PROVIDER = """
            package com.example.pinned;

            import dev.rollcall.api.Settings;
            import dev.rollcall.api.policy.Verdict;
            import dev.rollcall.api.policy.VersionPolicy;
            import dev.rollcall.api.policy.VersionPolicyProvider;

            public final class PinnedVersionPolicyProvider implements VersionPolicyProvider {
                @Override
                public String type() {
                    return "pinned";
                }

                @Override
                public VersionPolicy create(Settings settings) {
                    String pinned = settings.string("version");
                    return new VersionPolicy() {
                        @Override
                        public Verdict check(dev.rollcall.api.WorkerInfo worker) {
                            return worker.version().equals(pinned) ? Verdict.accept()
                                    : Verdict.reject("not the pinned version " + pinned);
                        }

                        @Override
                        public String description() {
                            return "pinned " + pinned;
                        }
                    };
                }
            }
            """;

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
        pluginJar = compileToJar(dir.resolve("plugins"), "com.example.pinned.PinnedVersionPolicyProvider", PROVIDER);
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

    /** Compiles one class against this JVM's class path and jars it with its service file. */
    static Path compileToJar(Path out, String className, String source) throws IOException {
        Path src = out.resolve("src").resolve(className.replace('.', '/') + ".java");
        Path classes = out.resolve("classes");
        Files.createDirectories(src.getParent());
        Files.createDirectories(classes);
        Files.writeString(src, source);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int rc = javac.run(null, null, null, "--release", "17", "-cp", System.getProperty("java.class.path"),
                "-d", classes.toString(), src.toString());
        assertThat(rc).as("javac of " + className).isZero();
        Path jar = out.resolve("pinned-policy.jar");
        try (JarOutputStream j = new JarOutputStream(Files.newOutputStream(jar)); Stream<Path> files = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                j.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
                Files.copy(f, j);
                j.closeEntry();
            }
            j.putNextEntry(new JarEntry("META-INF/services/dev.rollcall.api.policy.VersionPolicyProvider"));
            OutputStream o = j;
            o.write((className + "\n").getBytes(StandardCharsets.UTF_8));
            j.closeEntry();
        }
        return jar;
    }
}
