package dev.rollcall.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.PeerText;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.faults.FaultProxy;
import dev.rollcall.conformance.HandmadeWorker.Fault;
import dev.rollcall.conformance.RuleResult.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The kit against real workers on loopback: Rollcall's own, and hand-written ones with one fault each. */
class WorkerConformanceTest {

    private static final List<String> EXACT_DRAIN = List.of("W18", "W19", "W20", "W21", "W22");

    /** Generous for a loaded 2-core machine; the rules' own numbers stay as the protocol says. */
    private static WorkerConformance.Builder kit(int port) {
        return WorkerConformance.builder().target("127.0.0.1", port).callTimeout(Duration.ofSeconds(5))
                .watch(Duration.ofMillis(2500)).heartbeat(Duration.ofSeconds(1)).heartbeatSlack(Duration.ofSeconds(1));
    }

    @Test
    void aRollcallWorkerKeepsEveryObservableRule() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").host("127.0.0.1").port(0)
                .capabilities("udf:geo_distance", "datafusion=55.0.1").start()) {
            ConformanceReport report = kit(worker.port()).build().check();

            assertThat(report.failures()).as(String.join("\n", report.lines())).isEmpty();
            assertThat(report.results()).extracting(RuleResult::rule).containsExactlyElementsOf(Findings.RULES);
            assertThat(report.result("W3").orElseThrow().seen()).contains(worker.instanceId());
            assertThat(report.result("W10").orElseThrow().outcome()).isEqualTo(Outcome.PASSED);
            assertThat(report.result("W13").orElseThrow().outcome()).isEqualTo(Outcome.NOT_CHECKED);
            assertThat(report.result("W18").orElseThrow().seen()).contains("refused with INVALID_ARGUMENT");
            assertThat(report.result("W20").orElseThrow().seen()).contains("refused with FAILED_PRECONDITION")
                    .contains("a holder_id that holds nothing refused with NOT_FOUND").contains("holders 0");
            assertThat(report.results()).filteredOn(r -> List.of("W19", "W21", "W22").contains(r.rule()))
                    .extracting(RuleResult::outcome).containsOnly(Outcome.NOT_CHECKED);
        }
    }

    @Test
    void aHandmadeWorkerWithoutFaultsPasses() {
        try (HandmadeWorker worker = HandmadeWorker.start(Fault.NONE)) {
            ConformanceReport report = kit(worker.port()).build().check();

            assertThat(report.failures()).as(String.join("\n", report.lines())).isEmpty();
            assertThat(report.results()).filteredOn(r -> EXACT_DRAIN.contains(r.rule()))   // no ReleaseWorker: recommended
                    .allSatisfy(r -> assertThat(r.line()).contains("not implemented (recommended)")
                            .contains("ReleaseWorker answered UNIMPLEMENTED").contains("on its quiet period (W13)"));
        }
    }

    @Test
    void aWorkerFromBeforeRevisionsAndHeartbeats_passesWithThemReportedNotImplemented() {
        try (HandmadeWorker worker = HandmadeWorker.start(Fault.NO_REVISIONS_NO_HEARTBEATS)) {
            ConformanceReport report = kit(worker.port()).build().check();

            assertThat(report.passed()).as(String.join("\n", report.lines())).isTrue();
            assertThat(report.results()).filteredOn(r -> r.outcome() == Outcome.NOT_IMPLEMENTED)
                    .extracting(RuleResult::rule).as(String.join("\n", report.lines()))
                    .containsExactly("W9", "W10", "W17", "W18", "W19", "W20", "W21", "W22");
            assertThat(report.result("W9").orElseThrow().line()).startsWith("W9   not implemented (recommended) ")
                    .contains("revision 0 (not sent)").contains("order its answers by arrival");
            assertThat(report.result("W10").orElseThrow().seen()).contains("asked for 1000 ms and was granted 0")
                    .contains("only through HTTP/2 keepalive");
            assertThat(report.result("W6").orElseThrow().outcome()).isEqualTo(Outcome.PASSED); // its change, pushed
        }
    }

    @Test
    void aWorkerFromBeforeRevisionsAndHeartbeats_failsAStrictRun() {
        try (HandmadeWorker worker = HandmadeWorker.start(Fault.NO_REVISIONS_NO_HEARTBEATS)) {
            ConformanceReport report = kit(worker.port()).strict(true).build().check();

            assertThat(report.failures()).extracting(RuleResult::rule).as(String.join("\n", report.lines()))
                    .containsExactly("W9", "W10", "W17", "W18", "W19", "W20", "W21", "W22");
            assertThat(report.result("W9").orElseThrow().seen())
                    .startsWith("not implemented (recommended; a strict run requires it): revision 0 (not sent)");
            assertThatThrownBy(report::requirePassed).isInstanceOf(AssertionError.class)
                    .hasMessageContaining("breaks 8 rule(s)");
        }
    }

    @Test
    void revisionsThatGoBack_failW9ThoughRevisionsAreRecommended() {
        try (HandmadeWorker worker = HandmadeWorker.start(Fault.REVISIONS_GO_BACK)) {
            ConformanceReport report = kit(worker.port()).build().check();

            assertThat(report.result("W9").orElseThrow().outcome()).as(String.join("\n", report.lines()))
                    .isEqualTo(Outcome.FAILED);
            assertThat(report.result("W9").orElseThrow().seen()).contains("revision 9 after revision 10");
            assertThat(report.passed()).isFalse();
        }
    }

    @Test
    void aWorkerThatReleasesForAnyInstanceOrId_failsW18AndW20() {
        try (HandmadeWorker worker = HandmadeWorker.start(Fault.RELEASES_ANYTHING)) {
            ConformanceReport report = kit(worker.port()).build().check();

            assertThat(report.failures()).extracting(RuleResult::rule).as(String.join("\n", report.lines()))
                    .containsExactly("W18", "W20");
            assertThat(report.result("W18").orElseThrow().seen()).contains("of 65 characters was accepted");
            assertThat(report.result("W20").orElseThrow().seen()).contains("another process's instance_id was answered OK")
                    .contains("with a holder_id that holds nothing on the worker (no stream of it was opened) was"
                            + " answered OK");
        }
    }

    @Test
    void aNewInstanceIdOnEveryCall_failsW3() {
        try (HandmadeWorker worker = HandmadeWorker.start(Fault.NEW_ID_EVERY_CALL)) {
            ConformanceReport report = kit(worker.port()).build().check();

            assertThat(report.failures()).extracting(RuleResult::rule).as(String.join("\n", report.lines())).contains("W3");
            assertThat(report.result("W3").orElseThrow().seen()).contains("where the process said");
        }
    }

    @Test
    void aStreamThatNeverPushesAChange_failsW6() {
        try (HandmadeWorker worker = HandmadeWorker.start(Fault.NEVER_PUSHES)) {
            ConformanceReport report = kit(worker.port()).build().check();

            assertThat(report.failures()).extracting(RuleResult::rule).as(String.join("\n", report.lines()))
                    .containsExactly("W6", "W12");
            assertThat(report.result("W6").orElseThrow().seen()).contains("state NOT_SERVING, revision 2")
                    .contains("state SERVING, revision 1");
        }
    }

    @Test
    void aVersionOutOfBounds_failsW14() {
        try (HandmadeWorker worker = HandmadeWorker.start(Fault.VERSION_TOO_LONG)) {
            ConformanceReport report = kit(worker.port()).build().check();

            assertThat(report.failures()).extracting(RuleResult::rule).as(String.join("\n", report.lines()))
                    .containsExactly("W14");
            assertThat(report.result("W14").orElseThrow().seen()).contains("version is 306 characters long (at most 256)");
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "TOO_MANY_CAPABILITIES             | 129 capabilities (at most 128)",
            "CAPABILITY_NAMED_TWICE            | capability 'plan-protocol' is given twice ('plan-protocol=2' and 'plan-protocol=3')",
            "CAPABILITY_VERSION_WITH_AN_ESCAPE | capability 'datafusion': version '55\\u001b[2J' is not a version"})
    void capabilitiesOutOfBounds_failW14NamingTheBoundEscaped(Fault fault, String bound) {
        try (HandmadeWorker worker = HandmadeWorker.start(fault)) {
            ConformanceReport report = kit(worker.port()).build().check();

            assertThat(report.failures()).extracting(RuleResult::rule).as(String.join("\n", report.lines()))
                    .containsExactly("W14");
            String seen = report.result("W14").orElseThrow().seen();
            assertThat(seen).contains(bound);
            assertThat(PeerText.isClean(seen)).as(seen).isTrue();
        }
    }

    @Test
    void heartbeatsFarMoreOftenThanGranted_failW10() {
        try (HandmadeWorker worker = HandmadeWorker.start(Fault.REPEATS_EVERY_50_MS)) {
            ConformanceReport report = kit(worker.port()).build().check();

            assertThat(report.failures()).extracting(RuleResult::rule).as(String.join("\n", report.lines()))
                    .containsExactly("W10");
            assertThat(report.result("W10").orElseThrow().seen()).contains("with 1000 ms granted");
        }
    }

    @Test
    void nothingListening_failsW1AndChecksNothingElse() {
        ConformanceReport report = kit(WorkerFleet.freeEndpoint().port()).build().check();

        assertThat(report.failures()).extracting(RuleResult::rule).containsExactly("W1");
        assertThat(report.result("W1").orElseThrow().seen()).contains("UNAVAILABLE");
        assertThat(report.results()).filteredOn(r -> !r.rule().equals("W1"))
                .allMatch(r -> r.outcome() == Outcome.NOT_CHECKED);
    }

    @Test
    void expectDrain_passesWhenTheOperatorStopsTheWorkerWhileItWatches() throws Exception {
        RollcallWorker worker = RollcallWorker.builder().version("1.4.0").host("127.0.0.1").port(0).start();
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        ConformanceReport report = kit(worker.port()).expectDrain(true).waitFor(Duration.ofSeconds(30))
                .onWaiting(expectation -> new Thread(() -> {   // the operator, while the kit watches
                    worker.close();
                    stopped.complete(null);
                }, "operator").start())
                .build().check();
        stopped.get();

        assertThat(report.failures()).as(String.join("\n", report.lines())).isEmpty();
        assertThat(report.result("W13").orElseThrow().outcome()).isEqualTo(Outcome.PASSED);
        assertThat(report.result("W13").orElseThrow().seen()).contains("DRAINING pushed").contains("new calls refused");
        assertThat(report.result("W6").orElseThrow().outcome()).isEqualTo(Outcome.PASSED);
        assertThat(report.results()).filteredOn(r -> EXACT_DRAIN.contains(r.rule())).extracting(RuleResult::outcome)
                .as(String.join("\n", report.lines())).containsOnly(Outcome.PASSED);
        assertThat(report.result("W19").orElseThrow().seen()).contains("stayed open until the kit let go")
                .contains("a stream opened anew with the released id was not counted");
        assertThat(report.result("W21").orElseThrow().seen()).contains("holders 3 -> 2 pushed");
        assertThat(report.result("W22").orElseThrow().seen()).contains("after the kit's last release");
    }

    @Test
    void expectDrainAndRestart_passesW13WhenASuccessorTakesTheAddressBeforeAnyRefusal() throws Exception {
        // A hot restart: new connections reach the successor before the old process stops, so the
        // address never refuses a call. The kit once waited for a refusal it could not see (and, with
        // a successor that starts within its 200 ms poll, missed one that came and went).
        RollcallWorker old = RollcallWorker.builder().version("1.4.0").host("127.0.0.1").port(0).start();
        CompletableFuture<RollcallWorker> successor = new CompletableFuture<>();
        try (FaultProxy address = FaultProxy.to(old.port())) {
            ConformanceReport report = kit(address.port()).expectDrain(true).expectRestart(true)
                    .waitFor(Duration.ofSeconds(30))
                    .onWaiting(expectation -> new Thread(() -> {   // the operator: successor first, then stop
                        try {
                            RollcallWorker next = RollcallWorker.builder().version("1.4.1").host("127.0.0.1").port(0).start();
                            address.redirectNewConnections(next.endpoint());
                            successor.complete(next);
                            old.close();
                        } catch (Throwable t) {
                            successor.completeExceptionally(t);
                        }
                    }, "operator").start())
                    .build().check();
            try (RollcallWorker next = successor.get()) {
                assertThat(report.result("W13").orElseThrow().outcome()).as(String.join("\n", report.lines()))
                        .isEqualTo(Outcome.PASSED);
                assertThat(report.result("W13").orElseThrow().seen()).contains("answered by the successor");
                assertThat(report.result("W3").orElseThrow().seen()).contains(next.instanceId());
            }
        } finally {
            old.close();
        }
    }

    @Test
    void expectDrain_failsW19WhenTheWorkerStopsWhileTheKitStillHoldsIt() throws Exception {
        RollcallWorker worker = RollcallWorker.builder().version("1.4.0").host("127.0.0.1").port(0)
                .shutdownGrace(Duration.ofMillis(100)).start(); // a grace far below the kit's hold
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        ConformanceReport report = kit(worker.port()).expectDrain(true).waitFor(Duration.ofSeconds(30))
                .hold(Duration.ofSeconds(3))
                .onWaiting(expectation -> new Thread(() -> {
                    worker.close();
                    stopped.complete(null);
                }, "operator").start())
                .build().check();
        stopped.get();

        assertThat(report.failures()).extracting(RuleResult::rule).as(String.join("\n", report.lines()))
                .containsExactly("W19");
        assertThat(report.result("W19").orElseThrow().seen()).contains("still held it (no release sent yet");
        assertThat(report.result("W13").orElseThrow().outcome()).isEqualTo(Outcome.PASSED);
    }

    @Test
    void expectDrain_failsW13WhenTheWorkerIsNeverStopped() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").host("127.0.0.1").port(0).start()) {
            ConformanceReport report = kit(worker.port()).expectDrain(true).waitFor(Duration.ofSeconds(2)).build().check();

            assertThat(report.failures()).extracting(RuleResult::rule).containsExactly("W13");
            assertThat(report.result("W13").orElseThrow().seen()).contains("DRAINING was never pushed");
        }
    }
}
