package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class RollcallCommandTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return new CommandLine(new RollcallCommand())
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(args);
    }

    @Test
    void version_printsTheBuiltVersion() {
        assertThat(run("--version")).isZero();
        assertThat(out.toString()).startsWith("rollcall 0.").contains("Java ");
    }

    @Test
    void noSubcommand_printsUsageAndExitsTwo() {
        assertThat(run()).isEqualTo(2);
        assertThat(err.toString()).contains("Usage: rollcall").contains("demo");
    }

    @Test
    void usage_listsEveryCommand() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString()).contains("demo").contains("workers").contains("probe");
    }

    @Test
    void help_probe_listsItsExitCodes() {
        assertThat(run("help", "probe")).isZero();
        assertThat(out.toString()).contains("Usage: rollcall probe").contains("--expect").contains("--timeout")
                .contains("Exit codes:");
    }

    @Test
    void help_listsTheDemo() {
        assertThat(run("help", "demo")).isZero();
        assertThat(out.toString()).contains("Usage: rollcall demo").contains("--verbose");
    }

    @Test
    void unknownOption_isAUsageError() {
        assertThat(run("demo", "--no-such-option")).isEqualTo(2);
        assertThat(err.toString()).contains("Unknown option");
    }
}
