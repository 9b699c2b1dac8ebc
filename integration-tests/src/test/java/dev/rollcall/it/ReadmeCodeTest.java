package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.example.coordinator.Coordinator;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import dev.rollcall.api.policy.VersionPolicyProvider;
import dev.rollcall.core.RollcallConfig;
import dev.rollcall.testkit.WorkerFleet;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the README's code honest: a Java block preceded by {@code <!-- compiled: PATH -->} must be
 * exactly the file at PATH, which the build compiles (and, for the Quick Start, this test runs). Every
 * Java block of the Quick Start and of "Writing your own policy" must carry such a marker.
 */
class ReadmeCodeTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern MARKED = Pattern.compile(
            "<!-- compiled: (\\S+) -->\\n```java\\n(.*?)```", Pattern.DOTALL);

    record Marked(String path, String code) {
    }

    private static String readme() throws IOException {
        return Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
    }

    private static List<Marked> marked(String text) {
        List<Marked> found = new ArrayList<>();
        Matcher m = MARKED.matcher(text);
        while (m.find()) {
            found.add(new Marked(m.group(1), m.group(2)));
        }
        return found;
    }

    @Test
    void everyMarkedJavaBlockIsExactlyTheCompiledFileItNames() throws IOException {
        List<Marked> blocks = marked(readme());

        assertThat(blocks).extracting(Marked::path).contains(
                "integration-tests/src/test/java/com/example/coordinator/Coordinator.java",
                "integration-tests/src/test/java/com/example/worker/Worker.java",
                "integration-tests/src/main/java/dev/rollcall/example/policy/MajorityVersionPolicy.java",
                "integration-tests/src/main/java/dev/rollcall/example/policy/MajorityVersionPolicyProvider.java");
        for (Marked block : blocks) {
            Path source = ROOT.resolve(block.path());
            assertThat(source).as("the file README.md shows").isRegularFile();
            assertThat(block.code()).as("README.md's copy of " + block.path())
                    .isEqualTo(Files.readString(source, StandardCharsets.UTF_8));
        }
    }

    @Test
    void theQuickStartAndThePolicySectionShowOnlyCompiledJava() throws IOException {
        String text = readme();
        for (String heading : List.of("## Quick start", "## Writing your own policy")) {
            int from = text.indexOf(heading);
            assertThat(from).as(heading).isNotNegative();
            int to = text.indexOf("\n## ", from + heading.length());
            String section = text.substring(from, to < 0 ? text.length() : to);
            int javaBlocks = section.split("```java\\n", -1).length - 1;
            assertThat(marked(section)).as("marked Java blocks in " + heading).hasSize(javaBlocks);
        }
    }

    @Test
    void theConfigurationTableNamesEveryDiscoveryAndPolicyTypeOnTheClassPath() throws IOException {
        String text = readme();
        String discoveryRow = row(text, "| `rollcall.discovery.type` |");
        String policyRow = row(text, "| `rollcall.policy.type` |");
        for (WorkerDiscoveryProvider p : ServiceLoader.load(WorkerDiscoveryProvider.class)) {
            assertThat(discoveryRow).as("rollcall.discovery.type row").contains("`" + p.type() + "`");
        }
        for (VersionPolicyProvider p : ServiceLoader.load(VersionPolicyProvider.class)) {
            if (!p.getClass().getPackageName().startsWith("dev.rollcall.example")) {
                assertThat(policyRow).as("rollcall.policy.type row").contains("`" + p.type() + "`");
            }
        }
        assertThat(text).doesNotContain("more to come").doesNotContain("modules are next");
    }

    private static String row(String text, String start) {
        int at = text.indexOf(start);
        assertThat(at).as(start).isNotNegative();
        return text.substring(at, text.indexOf('\n', at));
    }

    @Test
    void theQuickStartCoordinatorRunsAgainstAFleetConfiguredAsTheReadmeSays(@TempDir Path dir) throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0", "1.5.1", "2.0.0")) {
            Path config = dir.resolve("rollcall.properties");
            Files.write(config, List.of(
                    "rollcall.discovery.type=static",
                    "rollcall.discovery.static.endpoints=" + fleet.endpointList(),
                    "rollcall.policy.type=semver",
                    "rollcall.policy.semver.range=^1.4.0",
                    "rollcall.probe.timeout=10s"), StandardCharsets.UTF_8);
            String previous = System.setProperty(RollcallConfig.CONFIG_PROPERTY, config.toString());
            PrintStream originalOut = System.out;
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            try {
                Coordinator.main(new String[0]);
            } finally {
                System.setOut(originalOut);
                if (previous == null) {
                    System.clearProperty(RollcallConfig.CONFIG_PROPERTY);
                } else {
                    System.setProperty(RollcallConfig.CONFIG_PROPERTY, previous);
                }
            }
            // awaitSettled returns once every candidate has a verdict: both compatible workers, never 2.0.0.
            String printed = out.toString(StandardCharsets.UTF_8);
            assertThat(printed).contains("scheduling on 127.0.0.1:" + fleet.worker(0).endpoint().port() + " (1.4.0)")
                    .contains("scheduling on 127.0.0.1:" + fleet.worker(1).endpoint().port() + " (1.5.1)")
                    .doesNotContain("(2.0.0)");
        }
    }
}
