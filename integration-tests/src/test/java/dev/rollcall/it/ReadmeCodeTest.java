package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.example.coordinator.Coordinator;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import dev.rollcall.api.policy.VersionPolicyProvider;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.local.WorkerFleet;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the code of the front page, the {@code docs/} pages and the module READMEs honest: a Java
 * block preceded by {@code <!-- compiled: PATH -->} must be exactly the file at PATH, which the build
 * compiles (and, for the Quick Start, this test runs). Every marker must stand right before a Java
 * block. The README's Quick Start, and the pages {@code docs/writing-a-policy.md} and
 * {@code docs/calling-workers.md} as a whole, show only such compiled Java.
 */
class ReadmeCodeTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern MARKED = Pattern.compile(
            "(?m)^<!-- compiled: (\\S+) -->\\n```java\\n(.*?)```", Pattern.DOTALL);
    /** A marker on a line of its own, where {@link #MARKED} looks for one; quoted in prose it is not one. */
    private static final Pattern MARKER = Pattern.compile("(?m)^<!-- compiled: ");

    record Marked(String path, String code) {
    }

    /** README.md, every page under docs/ and every module's README.md, by path from the root. */
    static Map<String, String> pages() throws IOException {
        Map<String, String> pages = new TreeMap<>();
        List<Path> files = new ArrayList<>();
        files.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).forEach(files::add);
        }
        try (Stream<Path> modules = Files.list(ROOT)) {
            modules.map(m -> m.resolve("README.md")).filter(Files::isRegularFile).forEach(files::add);
        }
        for (Path file : files) {
            pages.put(ROOT.relativize(file).toString().replace('\\', '/'),
                    Files.readString(file, StandardCharsets.UTF_8));
        }
        return pages;
    }

    private static String page(String path) throws IOException {
        return Files.readString(ROOT.resolve(path), StandardCharsets.UTF_8);
    }

    private static List<Marked> marked(String text) {
        List<Marked> found = new ArrayList<>();
        Matcher m = MARKED.matcher(text);
        while (m.find()) {
            found.add(new Marked(m.group(1), m.group(2)));
        }
        return found;
    }

    private static int javaBlocks(String text) {
        return text.split("```java\\n", -1).length - 1;
    }

    private static String section(String text, String heading) {
        int from = text.indexOf(heading);
        assertThat(from).as(heading).isNotNegative();
        int to = text.indexOf("\n## ", from + heading.length());
        return text.substring(from, to < 0 ? text.length() : to);
    }

    @Test
    void everyMarkedJavaBlockIsExactlyTheCompiledFileItNames() throws IOException {
        Map<String, String> pages = pages();
        assertThat(pages).containsKeys("README.md", "docs/writing-a-policy.md", "docs/calling-workers.md");

        assertThat(marked(pages.get("README.md"))).extracting(Marked::path).contains(
                "integration-tests/src/test/java/com/example/coordinator/Coordinator.java",
                "integration-tests/src/test/java/com/example/worker/Worker.java");
        assertThat(marked(pages.get("docs/writing-a-policy.md"))).extracting(Marked::path).contains(
                "integration-tests/src/main/java/dev/rollcall/example/policy/MajorityVersionPolicy.java",
                "integration-tests/src/main/java/dev/rollcall/example/policy/MajorityVersionPolicyProvider.java");
        assertThat(marked(pages.get("docs/calling-workers.md"))).extracting(Marked::path).contains(
                "integration-tests/src/test/java/com/example/coordinator/CallingWorkers.java");

        for (Map.Entry<String, String> page : pages.entrySet()) {
            String text = page.getValue();
            List<Marked> blocks = marked(text);
            assertThat(blocks).as("markers in %s that stand right before a Java block", page.getKey())
                    .hasSize((int) MARKER.matcher(text).results().count());
            for (Marked block : blocks) {
                Path source = ROOT.resolve(block.path());
                assertThat(source).as("the file %s shows", page.getKey()).isRegularFile();
                assertThat(block.code()).as("%s's copy of %s", page.getKey(), block.path())
                        .isEqualTo(Files.readString(source, StandardCharsets.UTF_8));
            }
        }
    }

    @Test
    void theQuickStartAndThePolicyAndCallingPagesShowOnlyCompiledJava() throws IOException {
        Map<String, String> parts = new TreeMap<>();
        parts.put("README.md, ## Quick start", section(page("README.md"), "## Quick start"));
        parts.put("docs/writing-a-policy.md", page("docs/writing-a-policy.md"));
        parts.put("docs/calling-workers.md", page("docs/calling-workers.md"));
        for (Map.Entry<String, String> part : parts.entrySet()) {
            int javaBlocks = javaBlocks(part.getValue());
            assertThat(javaBlocks).as("Java blocks in " + part.getKey()).isPositive();
            assertThat(marked(part.getValue())).as("marked Java blocks in " + part.getKey()).hasSize(javaBlocks);
        }
    }

    @Test
    void theConfigurationTableNamesEveryDiscoveryAndPolicyTypeOnTheClassPath() throws IOException {
        String text = page("docs/configuration.md");
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
        for (Map.Entry<String, String> page : pages().entrySet()) {
            assertThat(page.getValue()).as(page.getKey())
                    .doesNotContain("more to come").doesNotContain("modules are next");
        }
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
