package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Front pages stay front pages: BENCHMARKS.md holds the current tables and what their rows mean, the
 * benchmark history holds conclusions, a module README says what the module is and links to the
 * depth in {@code docs/}. A page that grows past its limit fails here, named with its size.
 */
class FrontPageSizesTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final long KB = 1024;

    @Test
    void benchmarkPagesAndModuleReadmesStayWithinTheirLimits() throws IOException {
        List<String> over = new ArrayList<>();
        check(ROOT.resolve("BENCHMARKS.md"), 40 * KB, over);
        Path history = ROOT.resolve("docs/benchmarks/history.md");
        if (Files.exists(history)) {
            check(history, 20 * KB, over);
        }
        List<Path> readmes = moduleReadmes();
        assertThat(readmes).as("module READMEs found").hasSizeGreaterThan(10);
        for (Path readme : readmes) {
            check(readme, 12 * KB, over);
        }
        assertThat(over).as("pages over their size limit").isEmpty();
    }

    /** The README.md of every directory that is a Maven module of the build. */
    private static List<Path> moduleReadmes() throws IOException {
        try (Stream<Path> dirs = Files.list(ROOT)) {
            return dirs.filter(d -> Files.isRegularFile(d.resolve("pom.xml")))
                    .map(d -> d.resolve("README.md"))
                    .filter(Files::isRegularFile)
                    .sorted()
                    .toList();
        }
    }

    private static void check(Path page, long limit, List<String> over) throws IOException {
        long size = Files.size(page);
        if (size > limit) {
            over.add(String.format("%s is %,d bytes (%.1f KB), over its limit of %d KB",
                    ROOT.relativize(page), size, size / (double) KB, limit / KB));
        }
    }
}
