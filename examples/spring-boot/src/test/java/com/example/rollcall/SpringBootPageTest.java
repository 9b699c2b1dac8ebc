package com.example.rollcall;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Keeps docs/spring-boot.md's build honest: a block preceded by {@code <!-- example: PATH -->} must be
 * exactly the file at PATH, or, where the file marks a part ("docs/spring-boot.md prints from here"
 * to "... to here"), exactly that part without its indentation. The pom is this module's own, which
 * the build uses and {@link ExampleApplicationsTest} runs: a pin the page lacks fails here, not for a
 * user who copies it.
 */
class SpringBootPageTest {

    private static final Path ROOT = Path.of("../..").toAbsolutePath().normalize();
    private static final Pattern SHOWN = Pattern.compile(
            "(?m)^<!-- example: (\\S+) -->\\n```[a-z]+\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern MARKER = Pattern.compile("(?m)^<!-- example: ");
    private static final Pattern PART = Pattern.compile(
            "(?m)^( *)<!-- docs/spring-boot\\.md prints from here -->\\n(.*?)^ *<!-- docs/spring-boot\\.md prints to here",
            Pattern.DOTALL);

    private static String read(String path) throws IOException {
        return Files.readString(ROOT.resolve(path), StandardCharsets.UTF_8);
    }

    /** What the page must show of a file: its marked part, unindented, or the whole file. */
    private static String shownPartOf(String path) throws IOException {
        String text = read(path);
        Matcher part = PART.matcher(text);
        if (!part.find()) {
            return text;
        }
        String indent = part.group(1);
        StringBuilder unindented = new StringBuilder();
        for (String line : part.group(2).split("\n", -1)) {
            assertThat(line.isEmpty() || line.startsWith(indent)).as("%s: a marked line less indented than its marker: %s",
                    path, line).isTrue();
            unindented.append(line.isEmpty() ? "" : line.substring(indent.length())).append('\n');
        }
        return unindented.substring(0, unindented.length() - 1);
    }

    @Test
    void everyFileThePageShowsIsTheExamplesOwnAndTheBuildIsFromParentToDependencies() throws IOException {
        String page = read("docs/spring-boot.md");
        Map<String, String> shown = new LinkedHashMap<>();
        Matcher m = SHOWN.matcher(page);
        while (m.find()) {
            shown.put(m.group(1), m.group(2));
        }
        assertThat(shown).as("blocks that stand right after a marker").hasSize((int) MARKER.matcher(page).results().count());
        assertThat(shown).containsKeys("examples/spring-boot/pom.xml",
                "examples/spring-boot/src/main/resources/application.yml",
                "examples/spring-boot/src/main/resources/application-worker.yml");
        for (Map.Entry<String, String> block : shown.entrySet()) {
            assertThat(block.getValue()).as("docs/spring-boot.md's copy of %s", block.getKey())
                    .isEqualTo(shownPartOf(block.getKey()));
        }
        assertThat(shown.get("examples/spring-boot/pom.xml")).as("the part a user copies into a pom of their own")
                .startsWith("<parent>\n").endsWith("</dependencies>\n");
    }
}
