package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/guarantees.md is a promise only while the tests it names exist: every test class and method
 * named in a row's last column ({@code Class.method}, {@code .method} after a class of the same
 * cell, {@code *Suffix.method} for every class ending so, {@code method…} as a prefix) is a class of
 * some module's tests (or of testkit) declaring that method, itself or in the class it extends. A
 * test renamed without its row fails here.
 */
class GuaranteesNameRealTestsTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern CODE = Pattern.compile("`([^`]+)`");
    /** {@code Class}, {@code *Suffix}, {@code Class.method}, {@code Class#method}, {@code .method}, each method maybe ending in {@code …}. */
    private static final Pattern NAME = Pattern.compile("(\\*?[A-Z][A-Za-z0-9]*Test)?(?:[.#]([a-z][A-Za-z0-9_]*)(…)?)?");
    private static final Pattern EXTENDS = Pattern.compile("\\bextends\\s+([A-Z][A-Za-z0-9]*)");

    @Test
    void everyTestThePageNamesExistsWithTheMethodItNames() throws IOException {
        Map<String, List<String>> sources = sourcesBySimpleName();
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (String line : Files.readAllLines(ROOT.resolve("docs/guarantees.md"), StandardCharsets.UTF_8)) {
            if (!line.startsWith("| ") || line.startsWith("|---")) {
                continue;
            }
            String[] cells = line.split(" \\| ");
            String tests = cells[cells.length - 1];
            String lastClass = null;
            Matcher code = CODE.matcher(tests);
            while (code.find()) {
                Matcher name = NAME.matcher(code.group(1));
                if (!name.matches() || (name.group(1) == null && name.group(2) == null)) {
                    continue;
                }
                String cls = name.group(1) != null ? name.group(1) : lastClass;
                if (cls == null) {
                    continue;
                }
                lastClass = cls;
                checked++;
                List<String> texts = classTexts(sources, cls);
                if (texts.isEmpty()) {
                    missing.add(code.group(1) + ": no test class " + cls);
                } else if (name.group(2) != null) {
                    Pattern method = Pattern.compile("\\b" + name.group(2) + (name.group(3) != null ? "\\w*" : "") + "\\s*\\(");
                    // *Suffix: every such class (each backend's contract test); a plain name: one of its
                    // namesakes (two modules may each have a WorkerConformanceTest)
                    boolean found = cls.startsWith("*")
                            ? texts.stream().allMatch(text -> declares(sources, text, method))
                            : texts.stream().anyMatch(text -> declares(sources, text, method));
                    if (!found) {
                        missing.add(code.group(1) + ": " + cls + " declares no " + name.group(2));
                    }
                }
            }
        }
        assertThat(checked).as("test names checked").isGreaterThan(150);
        assertThat(missing).as("names in docs/guarantees.md that no test has").isEmpty();
    }

    private static boolean declares(Map<String, List<String>> sources, String text, Pattern method) {
        if (method.matcher(text).find()) {
            return true;
        }
        Matcher parent = EXTENDS.matcher(text);
        return parent.find() && sources.getOrDefault(parent.group(1), List.of()).stream()
                .anyMatch(p -> method.matcher(p).find());
    }

    private static List<String> classTexts(Map<String, List<String>> sources, String cls) {
        if (!cls.startsWith("*")) {
            return sources.getOrDefault(cls, List.of());
        }
        List<String> texts = new ArrayList<>();
        sources.forEach((simple, t) -> {
            if (simple.endsWith(cls.substring(1))) {
                texts.addAll(t);
            }
        });
        return texts;
    }

    /** Every test source of every module, and testkit's main sources (the shared contracts). */
    private static Map<String, List<String>> sourcesBySimpleName() throws IOException {
        Map<String, List<String>> sources = new HashMap<>();
        try (Stream<Path> files = Files.walk(ROOT, 12)) {
            files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/node_modules/"))
                    .filter(p -> p.toString().contains("/src/test/java/")
                            || p.startsWith(ROOT.resolve("testkit/src/main/java")))
                    .forEach(p -> {
                        String simple = p.getFileName().toString().replace(".java", "");
                        try {
                            sources.computeIfAbsent(simple, k -> new ArrayList<>())
                                    .add(Files.readString(p, StandardCharsets.UTF_8));
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
        }
        return sources;
    }
}
