package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.core.WorkerResolver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** What a published library is expected to carry, checked against the build's own files. */
class PublishingTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    /** Built but never published (the distribution's tarball is a download, not a Maven artifact). */
    private static final Set<String> UNPUBLISHED = Set.of("bom", "dependencies", "integration-tests", "benchmarks",
            "examples/spring-boot", "distribution", "consumer-check");

    private static String read(String path) throws IOException {
        return Files.readString(ROOT.resolve(path), StandardCharsets.UTF_8);
    }

    private static Set<String> all(Pattern pattern, String text) {
        Set<String> found = new TreeSet<>();
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }

    @Test
    void theBomPinsEveryPublishedModuleAndNothingElse() throws IOException {
        Set<String> published = new TreeSet<>();
        for (String module : all(Pattern.compile("<module>([^<]+)</module>"), read("pom.xml"))) {
            if (!UNPUBLISHED.contains(module)) {
                String pom = read(module + "/pom.xml");
                // The module's own artifactId: the first one after its <parent> block.
                published.add(all(Pattern.compile("</parent>\\s*<artifactId>([^<]+)</artifactId>"), pom).iterator().next());
            }
        }
        String bom = read("bom/pom.xml");
        assertThat(all(Pattern.compile("<artifactId>(rollcall-[^<]+)</artifactId>"), bom))
                .containsExactlyInAnyOrderElementsOf(append(published, "rollcall-bom"));
        assertThat(bom).doesNotContain("<parent>").contains("<groupId>dev.rollcall</groupId>");
    }

    /**
     * rollcall-dependencies hands users the set the build tests only if it takes each version from
     * the parent's properties: a version written here would stay behind at the parent's next bump.
     */
    @Test
    void theDependenciesBomTakesEveryVersionFromTheParentsProperties() throws IOException {
        String dependencies = read("dependencies/pom.xml");
        String parent = read("pom.xml");
        String managed = dependencies.substring(dependencies.indexOf("<dependencyManagement>"),
                dependencies.indexOf("</dependencyManagement>"));
        Set<String> versions = all(Pattern.compile("<version>([^<]+)</version>"), managed);
        assertThat(versions).as("dependencies/pom.xml's managed versions").allSatisfy(v -> assertThat(v).matches("\\$\\{[^}]+}"));
        for (String version : versions) {
            String property = version.substring(2, version.length() - 1);
            if (!property.equals("project.version")) {
                assertThat(parent).as("the parent declares " + property).contains("<" + property + ">");
            }
        }
        assertThat(all(Pattern.compile("<artifactId>([^<]+)</artifactId>"), managed)).containsExactly(
                "arrow-bom", "grpc-bom", "guava", "jackson-bom", "netty-bom", "protobuf-bom", "rollcall-bom");
        assertThat(managed).contains("<groupId>tools.jackson</groupId>", "<groupId>com.fasterxml.jackson</groupId>");
        // Published without the parent: importing it must not also pin the build's test libraries.
        assertThat(dependencies).contains("<artifactId>flatten-maven-plugin</artifactId>", "<parent>remove</parent>");
    }

    /**
     * The enforcer's no-test-libraries rule runs where a module opts in, so a shipped module that
     * forgets to would carry JUnit or AssertJ to users unseen: every published module but the
     * testkit (test code by design) opts in.
     */
    @Test
    void everyPublishedModuleButTheTestkitRefusesTestLibrariesAtRunTime() throws IOException {
        String optIn = "<rollcall.productClasspath.skip>false</rollcall.productClasspath.skip>";
        Set<String> withoutTheRule = new TreeSet<>();
        for (String module : all(Pattern.compile("<module>([^<]+)</module>"), read("pom.xml"))) {
            if (!UNPUBLISHED.contains(module) && !module.equals("testkit") && !read(module + "/pom.xml").contains(optIn)) {
                withoutTheRule.add(module);
            }
        }
        assertThat(withoutTheRule).as("published modules without " + optIn).isEmpty();
        assertThat(read("pom.xml")).contains("<id>no-test-libraries</id>", "<skip>${rollcall.productClasspath.skip}</skip>",
                "org.junit*:*:*:*:runtime", "org.assertj*:*:*:*:runtime", "org.opentest4j*:*:*:*:runtime",
                "org.mockito*:*:*:*:runtime", "org.hamcrest*:*:*:*:runtime");
    }

    private static Set<String> append(Set<String> set, String more) {
        Set<String> copy = new TreeSet<>(set);
        copy.add(more);
        return Collections.unmodifiableSet(copy);
    }

    @Test
    void everyPomCarriesTheMetadataARepositoryRequires() throws IOException {
        for (String pom : List.of("pom.xml", "bom/pom.xml")) {
            assertThat(read(pom)).as(pom).contains("<url>", "<licenses>", "<name>Apache-2.0</name>", "<scm",
                    "<developers>", "<description>", "<project.build.outputTimestamp>");
        }
        assertThat(read("LICENSE")).contains("Apache License", "Version 2.0, January 2004");
        assertThat(read("CHANGELOG.md")).contains("## [0.1.0]");
    }

    @Test
    void jarsAreReproducible_everyEntryCarriesTheConfiguredTimestamp() throws Exception {
        String configured = System.getProperty("build.outputTimestamp");
        assertThat(configured).as("surefire passes project.build.outputTimestamp").isNotBlank();
        LocalDateTime expected = LocalDateTime.ofInstant(Instant.parse(configured), ZoneOffset.UTC);
        Path core = Path.of(WorkerResolver.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path jar = core.toString().endsWith(".jar") ? core
                : core.getParent().resolve("rollcall-core-" + System.getProperty("build.version") + ".jar");
        if (!Files.exists(jar)) {
            // A reactor run that stopped before "package": check the module's own pom instead.
            assertThat(read("pom.xml")).contains("<project.build.outputTimestamp>" + configured);
            return;
        }
        try (JarFile file = new JarFile(jar.toFile())) {
            assertThat(Collections.list(file.entries())).isNotEmpty()
                    .allSatisfy(e -> assertThat(e.getTimeLocal()).as(e.getName()).isEqualTo(expected));
        }
    }
}
