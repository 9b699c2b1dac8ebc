package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.testkit.ThreadCensus;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** Runs {@code rollcall demo} in-process, once, and checks the story it tells. */
class DemoCommandTest {

    private static int exitCode;
    private static String output;

    @BeforeAll
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    static void runDemo() {
        StringWriter captured = new StringWriter();
        PrintWriter pw = new PrintWriter(captured, true);
        exitCode = new CommandLine(new RollcallCommand()).setOut(pw).setErr(pw).execute("demo");
        output = captured.toString();
    }

    private static List<String> lines() {
        return output.lines().toList();
    }

    @Test
    void demo_exitsZero() {
        assertThat(exitCode).as(output).isZero();
        assertThat(output).contains("== Done in ").doesNotContain("FAILED");
    }

    @Test
    void table_showsEachKindOfVerdict() {
        assertThat(lines()).as(output)
                .anyMatch(l -> l.contains("1.4.0") && l.contains("compatible"))
                .anyMatch(l -> l.contains("1.5.1") && l.contains("compatible"))
                .anyMatch(l -> l.contains("2.0.0") && l.contains("rejected") && l.contains("outside ^1.4.0"))
                .anyMatch(l -> l.contains("unreachable") && l.contains("DEADLINE_EXCEEDED"));
        assertThat(output).contains("5 candidates: 3 compatible, 1 rejected by version, 1 unreachable, 0 pending;"
                + " versions {1.4.0=2, 1.5.1=1, 2.0.0=1}; policy semver ^1.4.0");
    }

    @Test
    void firstJob_usesTheThreeCompatibleWorkersAndIsCorrect() {
        assertThat(lines()).as(output).anyMatch(l -> l.startsWith("job on snapshot ")
                && l.endsWith(": 3 workers, versions {1.4.0=2, 1.5.1=1}, sum of squares 0..999999 = "
                + SquaresJob.expectedSum(1_000_000) + " (correct)"));
        assertThat(SquaresJob.expectedSum(1_000_000)).isEqualTo(333_332_833_333_500_000L);
    }

    @Test
    void rollingUpgrade_replacesOneWorkerPerStep() {
        List<String> jobs = lines().stream().filter(l -> l.contains("job on snapshot ")).toList();
        assertThat(jobs).as(output).hasSize(4).allMatch(l -> l.endsWith("(correct)"));
        assertThat(jobs.get(1)).contains("versions {1.4.0=1, 1.5.1=1, 1.6.0=1}");
        assertThat(jobs.get(2)).contains("versions {1.5.1=1, 1.6.0=2}");
        assertThat(jobs.get(3)).contains("versions {1.6.0=3}");
        assertThat(lines()).as(output)
                .anyMatch(l -> l.startsWith("step 1/3: ") && l.contains("(1.6.0) compatible") && l.contains("(1.4.0) drained"))
                .anyMatch(l -> l.startsWith("step 2/3: ") && l.contains("(1.4.0) drained"))
                .anyMatch(l -> l.startsWith("step 3/3: ") && l.contains("(1.5.1) drained"));
        assertThat(output).contains("versions {1.6.0=3, 2.0.0=1}");
        assertThat(lines()).as(output).anyMatch(l -> l.startsWith("step 1/3: ") && l.contains("drained in snapshot"));
    }

    @Test
    void rollingUpgrade_withDrainFailsNoJob() {
        assertThat(lines()).as(output).anyMatch(l -> l.matches(
                "[1-9][0-9]* small jobs ran on freshly pinned snapshots during the upgrade, 0 failed"));
    }

    @Test
    void version2_neverTakesPartInAJob() {
        assertThat(lines().stream().filter(l -> l.contains("job on snapshot "))).as(output)
                .isNotEmpty()
                .noneMatch(l -> l.contains("2.0.0"));
        assertThat(output).contains("took part in none of the 4 jobs");
    }

    @Test
    void rolloutStage_staysOnTheOldCohortUntilTheNewOneHasItsQuorum_thenSwitchesOnce() {
        List<String> steps = lines().stream().filter(l -> l.matches("step \\d/5: .*")).toList();
        assertThat(steps).as(output).containsExactly(
                "step 1/5: 2.1.0 x1, 2.0.0 x4 -> job on 2.0.0 (4 workers), sum correct",
                "step 2/5: 2.1.0 x2, 2.0.0 x3 -> job on 2.0.0 (3 workers), sum correct",
                "step 3/5: 2.1.0 x3, 2.0.0 x2 -> job on 2.1.0 (3 workers), sum correct",
                "step 4/5: 2.1.0 x4, 2.0.0 x1 -> job on 2.1.0 (4 workers), sum correct",
                "step 5/5: 2.1.0 x5, 2.0.0 x0 -> job on 2.1.0 (5 workers), sum correct");
        assertThat(output).contains("Every snapshot used one version; the cohort switched once, when 2.1.0 had 3"
                + " workers: 2.0.0 -> 2.1.0.");
    }

    @Test
    void unknownDiscoveryIsAUsageErrorNamingTheOption() {
        StringWriter captured = new StringWriter();
        PrintWriter pw = new PrintWriter(captured, true);
        int code = new CommandLine(new RollcallCommand()).setOut(pw).setErr(pw).execute("demo", "--discovery", "zk");
        assertThat(code).isEqualTo(2);
        assertThat(captured.toString()).contains("--discovery").contains("'zk' is not static or etcd");
    }

    @Test
    void everythingItStartedIsGone() {
        // Rollcall's own threads stop within close(); gRPC releases its shared event loops and
        // executor about a second after the last channel or server is gone.
        ThreadCensus.awaitNoneAlive(Duration.ofSeconds(10), "rollcall-", "grpc-");
    }
}
