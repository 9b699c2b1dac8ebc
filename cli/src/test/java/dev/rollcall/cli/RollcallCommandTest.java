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
        return RollcallCommand.commandLine(new RollcallCommand())
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
        assertThat(out.toString()).contains("demo").contains("workers").contains("probe").contains("serve");
    }

    @Test
    void help_probe_listsItsExitCodes() {
        assertThat(run("help", "probe")).isZero();
        assertThat(out.toString()).contains("Usage: rollcall probe").contains("--expect").contains("--timeout")
                .contains("Exit codes:");
    }

    @Test
    void help_serve_namesThePortKeysAndItsExitCodes() {
        assertThat(run("help", "serve")).isZero();
        assertThat(out.toString()).contains("Usage: rollcall serve", "--config", "--port", "--http-port",
                "rollcall.serve.port", "Exit codes:");
        assertThat(out.toString().lines()).allSatisfy(line -> assertThat(line.length()).as(line).isLessThanOrEqualTo(80));
    }

    @Test
    void help_listsTheDemo() {
        assertThat(run("help", "demo")).isZero();
        assertThat(out.toString()).contains("Usage: rollcall demo").contains("--verbose");
    }

    @Test
    void help_neverWrapsInsideAToken() {
        for (String command : new String[] {"workers", "probe", "demo"}) {
            assertThat(run(command, "--help")).isZero();
        }
        assertThat(run("--help")).isZero();
        String help = out.toString();
        // Each of these was cut at its '.', ':' or '/' before.
        assertThat(help).contains("-Drollcall.config=FILE", "^1.4,", "grpcs://host:port", "rollcall.probe.tls.*",
                "(rollcall.v1.WorkerService/WorkerInfo)");
        assertThat(help.lines()).allSatisfy(line -> {
            assertThat(line.length()).as(line).isLessThanOrEqualTo(80);
            assertThat(line.chars()).as(line).noneMatch(c -> c >= 0xE000 && c <= 0xF8FF);
        });
    }

    @Test
    void help_workers_showsAnExampleConfiguration() {
        assertThat(run("workers", "--help")).isZero();
        assertThat(out.toString()).contains("Example configuration (rollcall.properties):",
                "  rollcall.discovery.type=static", "  rollcall.policy.semver.range=^1.4.0",
                "  rollcall workers --config rollcall.properties");
    }

    @Test
    void unknownOption_isAUsageError() {
        assertThat(run("demo", "--no-such-option")).isEqualTo(2);
        assertThat(err.toString()).contains("Unknown option");
    }
}
