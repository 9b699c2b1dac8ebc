package dev.rollcall.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WriteDocTest {

    @TempDir
    Path dir;

    @Test
    void writeDocReplacesOnlyItsOwnRunsTableAndLeavesTheNotesToTheLogs() throws Exception {
        Path doc = dir.resolve("BENCHMARKS.md");
        Files.writeString(doc, """
                # Benchmarks
                <!-- results:quick:begin -->
                an old quick table
                <!-- results:quick:end -->
                <!-- results:full:begin -->
                the full table
                <!-- results:full:end -->
                ## What each row means
                """);
        Report report = new Report();
        report.add(new Report.Row("1. a row", "1 ms", "2 ms", "×2.00", "≤ 5 ms", "yes"));
        report.note("Read path (1): a setup described at length");

        Bench.writeDoc(doc, "quick", Bench.docSection("quick", "**Quick run**\n", report, "\n![a chart](c.png)\n"));

        String text = Files.readString(doc);
        assertThat(text).contains("| 1. a row | 1 ms | 2 ms | ×2.00 | ≤ 5 ms | yes |", "![a chart](c.png)",
                "`results-quick.md`", "the full table", "## What each row means");
        assertThat(text).doesNotContain("an old quick table", "a setup described at length");
        assertThat(report.markdown()).contains("a setup described at length");
    }
}
