package dev.rollcall.it.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No main-source file of core, worker or grpc passes {@value #MAX_LINES} lines: a class that long
 * does more than one job, and is split by job (a public builder may be its own file, as
 * {@code AbstractResolverBuilder} is {@code WorkerResolver.Builder}'s).
 */
class ClassSizeTest {

    static final int MAX_LINES = 450;
    static final List<String> MODULES = List.of("core", "worker", "grpc");

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void noMainSourceFileOfCoreWorkerOrGrpcPassesTheLimit() throws IOException {
        assertThat(tooLong(ROOT))
                .as("main-source files of %s over %d lines: split them by job", MODULES, MAX_LINES).isEmpty();
    }

    @Test
    void aPlantedFileOverTheLimitIsNamedWithItsLength(@TempDir Path root) throws IOException {
        Path dir = Files.createDirectories(root.resolve("worker/src/main/java/dev/rollcall/worker"));
        Files.write(dir.resolve("Long.java"), Collections.nCopies(MAX_LINES + 1, "//"), StandardCharsets.UTF_8);
        Files.write(dir.resolve("Short.java"), Collections.nCopies(MAX_LINES, "//"), StandardCharsets.UTF_8);

        assertThat(tooLong(root))
                .containsExactly("worker/src/main/java/dev/rollcall/worker/Long.java (451 lines)");
    }

    /** The main-source files of {@link #MODULES} under {@code root} over the limit, with their lengths. */
    private static List<String> tooLong(Path root) throws IOException {
        List<String> found = new ArrayList<>();
        for (String module : MODULES) {
            Path sources = root.resolve(module).resolve("src/main/java");
            if (!Files.isDirectory(sources)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(sources)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                    String name = root.relativize(file).toString().replace('\\', '/');
                    long lines = lines(file);
                    if (lines > MAX_LINES) {
                        found.add(name + " (" + lines + " lines)");
                    }
                }
            }
        }
        return found;
    }

    private static long lines(Path file) throws IOException {
        try (Stream<String> lines = Files.lines(file, StandardCharsets.UTF_8)) {
            return lines.count();
        }
    }
}
