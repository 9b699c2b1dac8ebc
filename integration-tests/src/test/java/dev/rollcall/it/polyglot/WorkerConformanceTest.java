package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.it.polyglot.ReferenceWorker.Language;
import dev.rollcall.testkit.Closer;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.WorkerProcess;
import dev.rollcall.conformance.ConformanceReport;
import dev.rollcall.conformance.RuleResult;
import dev.rollcall.conformance.RuleResult.Outcome;
import dev.rollcall.conformance.WorkerConformance;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The conformance kit on the three kinds of worker, each a real process on loopback: Rollcall's Java
 * worker in a JVM of its own, the Node and the Python reference workers. Each keeps every rule the
 * kit can see, exact drain (W18-W22) included; the Node and Python ones also drain on SIGTERM as
 * W13 and W22 ask (held by the kit's holder streams, stopped right after their release), and the
 * Python one restarts in place with a new instance id (W3).
 */
class WorkerConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @AutoClose
    private final Closer closer = new Closer();

    /** Deadlines for a loaded 2-core machine; the heartbeat asked for is the protocol's minimum grant. */
    private static WorkerConformance.Builder kit(int port) {
        return WorkerConformance.builder().target("127.0.0.1", port).callTimeout(Duration.ofSeconds(5))
                .watch(Duration.ofMillis(2500)).heartbeat(Duration.ofSeconds(1)).heartbeatSlack(Duration.ofSeconds(1));
    }

    private static void assertKeptEveryRule(ConformanceReport report) {
        assertThat(report.failures()).as(String.join("\n", report.lines())).isEmpty();
        assertThat(report.results()).filteredOn(r -> r.outcome() == Outcome.PASSED).extracting(RuleResult::rule)
                .as(String.join("\n", report.lines()))
                .contains("W1", "W2", "W3", "W4", "W5", "W7", "W8", "W9", "W10", "W12", "W14", "W15", "W16",
                        "W18", "W20");
        // Every recommended rule is implemented (exact drain included), but reflection: the Node and Python
        // workers serve no services of their own to describe.
        assertThat(report.results()).filteredOn(r -> r.outcome() == Outcome.NOT_IMPLEMENTED).extracting(RuleResult::rule)
                .as(String.join("\n", report.lines())).isSubsetOf("W17");
    }

    /** The drain as exact drain sees it: held by the kit's holder streams, stopped right after their release. */
    private static void assertDrainedExactly(ConformanceReport report) {
        assertThat(report.results()).filteredOn(r -> r.rule().matches("W13|W19|W21|W22")).extracting(RuleResult::outcome)
                .as(String.join("\n", report.lines())).containsOnly(Outcome.PASSED);
        assertThat(report.result("W21").orElseThrow().seen()).contains("holders 3 -> 2 pushed");
        assertThat(report.result("W19").orElseThrow().seen()).contains("a stream opened anew with the released id was not counted");
    }

    @Test
    void theKitHasOneResultPerRuleOfTheProtocolPage() throws Exception {
        String page = Files.readString(ReferenceWorker.repositoryRoot().resolve("docs/protocol.md"));
        List<String> rules = Pattern.compile("(?m)^\\*\\*(W\\d+)\\. ").matcher(page).results().map(m -> m.group(1)).toList();

        ConformanceReport report = kit(WorkerFleet.freeEndpoint().port()).build().check(); // nothing there: fast

        assertThat(rules).hasSizeGreaterThanOrEqualTo(17);
        assertThat(report.results()).extracting(RuleResult::rule).containsExactlyElementsOf(rules);
    }

    @Test
    void aJavaRollcallWorkerProcessPasses() throws Exception {
        WorkerProcess worker = closer.add(WorkerProcess.start(Map.of(), WAIT));

        assertKeptEveryRule(kit(worker.port()).build().check());
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void aReferenceWorkerPasses(Language language) {
        ReferenceWorker worker = closer.add(ReferenceWorker.start(language, "1.0.0", "--label", "zone=a"));

        ConformanceReport report = kit(worker.port()).build().check();

        assertKeptEveryRule(report);
        assertThat(report.result("W3").orElseThrow().seen()).contains(worker.instanceId());
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void aReferenceWorkerThatAdvertisesCapabilitiesPasses(Language language) {
        ReferenceWorker worker = closer.add(ReferenceWorker.start(language, "1.0.0", "--capability", "udf:geo_distance",
                "--capability", "plan-protocol=3", "--capability", "datafusion=55.0.1-rc.1+abc"));

        assertKeptEveryRule(kit(worker.port()).build().check());
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void aReferenceWorkerDrainsOnSigtermAsW13AndW22Ask(Language language) {
        ReferenceWorker worker = closer.add(ReferenceWorker.start(language, "1.0.0"));

        ConformanceReport report = kit(worker.port()).expectDrain(true).waitFor(WAIT)
                .onWaiting(expectation -> worker.terminate()) // the operator's SIGTERM, while the kit watches
                .build().check();

        assertKeptEveryRule(report);
        assertDrainedExactly(report);
        assertThat(report.result("W6").orElseThrow().outcome()).isEqualTo(Outcome.PASSED);
        assertThat(worker.awaitExit(WAIT)).isZero();
    }

    @Test
    void thePythonWorkerRestartedInPlaceHasANewInstanceId() throws Exception {
        int port = WorkerFleet.freeEndpoint().port();
        ReferenceWorker first = closer.add(ReferenceWorker.startOn(Language.PYTHON, port, "1.0.0"));
        CompletableFuture<ReferenceWorker> second = new CompletableFuture<>();

        ConformanceReport report = kit(port).expectDrain(true).expectRestart(true).waitFor(WAIT)
                .onWaiting(expectation -> new Thread(() -> {   // the operator: stop, then start again on the port
                    try {
                        first.terminate();
                        first.awaitExit(WAIT);
                        second.complete(closer.add(ReferenceWorker.startOn(Language.PYTHON, port, "1.1.0")));
                    } catch (Throwable t) {
                        second.completeExceptionally(t);
                    }
                }, "operator").start())
                .build().check();

        ReferenceWorker successor = second.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertKeptEveryRule(report);
        assertThat(report.result("W13").orElseThrow().outcome()).isEqualTo(Outcome.PASSED);
        assertThat(report.result("W3").orElseThrow().seen()).contains(first.instanceId()).contains(successor.instanceId());
    }
}
