package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.local.UnresponsiveWorker;
import dev.rollcall.local.WorkerFleet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code rollcall probe} in-process against real loopback workers: output lines and exit codes. */
class ProbeCommandTest {

    private static WorkerFleet fleet;
    private static String v140;
    private static String v141;
    private static String v200;
    /** Nothing listens there: refused at once. */
    private static String down;

    @BeforeAll
    static void startFleet() {
        fleet = WorkerFleet.start("1.4.0", "1.4.1", "2.0.0");
        v140 = fleet.worker(0).endpoint().url();
        v141 = fleet.worker(1).endpoint().url();
        v200 = fleet.worker(2).endpoint().url();
        down = WorkerFleet.freeEndpoint().url();
    }

    @AfterAll
    static void stopFleet() {
        fleet.close();
    }

    /**
     * {@code rollcall probe args}, with a generous {@code --timeout} unless the test gives one: on a
     * loaded 2-core machine a healthy worker's first answer can take longer than the default 2 s.
     */
    private static CommandRun.Finished probe(String... args) {
        List<String> all = new ArrayList<>(List.of("probe"));
        all.addAll(List.of(args));
        return CommandRun.run(withTimeout(all).toArray(String[]::new));
    }

    private static List<String> withTimeout(List<String> args) {
        List<String> all = new ArrayList<>(args);
        if (!all.contains("--timeout")) {
            all.addAll(List.of("--timeout", "10s"));
        }
        return all;
    }

    @Test
    void allInRange_printsOkForEachAndExitsZero() {
        var run = probe(v140, v141, "--expect", "^1.4");

        assertThat(run.exit()).as(run.transcript()).isZero();
        assertThat(run.lines()).as(run.transcript()).containsExactly(
                v140 + "  1.4.0  ok",
                v141 + "  1.4.1  ok",
                "2 workers: 2 ok, 0 mismatch, 0 unreachable; expected ^1.4");
        assertThat(run.err()).isEmpty();
    }

    @Test
    void versionOutsideTheRange_isAMismatchAndExitsOne() {
        var run = probe(v140, v200, "--expect", "^1.4");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
        assertThat(run.lines()).as(run.transcript()).containsExactly(
                v140 + "  1.4.0  ok",
                v200 + "  2.0.0  mismatch: version '2.0.0' is outside ^1.4",
                "2 workers: 1 ok, 1 mismatch, 0 unreachable; expected ^1.4");
    }

    @Test
    void workerThatIsDown_isUnreachableWithTheCauseAndExitsOne() {
        var run = probe(v140, down, "--expect", "^1.4");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
        assertThat(run.lines()).as(run.transcript()).hasSize(3);
        assertThat(run.lines().get(1)).as(run.transcript())
                .startsWith(down + "  -      unreachable: UNAVAILABLE: ")
                .contains("Connection refused");
        assertThat(run.lines().get(2)).isEqualTo("2 workers: 1 ok, 0 mismatch, 1 unreachable; expected ^1.4");
    }

    @Test
    void workerThatNeverAnswers_isUnreachableAfterTheTimeout() {
        try (UnresponsiveWorker hung = UnresponsiveWorker.start()) {
            var run = probe(hung.endpoint().url(), "--timeout", "300ms");

            assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
            assertThat(run.lines()).as(run.transcript()).containsExactly(
                    hung.endpoint().url() + "  -  unreachable: DEADLINE_EXCEEDED: no answer within 300 ms",
                    "1 worker: 0 ok, 1 unreachable");
        }
    }

    @Test
    void withoutExpect_anyVersionThatAnswersIsOk() {
        var run = probe(v140, v200);

        assertThat(run.exit()).as(run.transcript()).isZero();
        assertThat(run.lines()).as(run.transcript()).containsExactly(
                v140 + "  1.4.0  ok",
                v200 + "  2.0.0  ok",
                "2 workers: 2 ok, 0 unreachable");
    }

    @Test
    void withoutExpect_aWorkerThatIsDownStillFails() {
        var run = probe(v140, down);

        assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
        assertThat(run.lines().get(2)).isEqualTo("2 workers: 1 ok, 1 unreachable");
    }

    @Test
    void manyEndpointsThroughASmallConcurrency_keepTheOrderGiven() {
        List<String> args = new ArrayList<>(List.of("probe", "--concurrency", "2", "--expect", ">=1.4.0 <3"));
        List<String> urls = List.of(v200, down, v141, v140);
        args.addAll(urls);

        var run = CommandRun.run(withTimeout(args).toArray(String[]::new));

        assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
        assertThat(run.lines()).as(run.transcript()).hasSize(5);
        for (int i = 0; i < urls.size(); i++) {
            assertThat(run.lines().get(i)).startsWith(urls.get(i) + " ");
        }
        assertThat(run.lines().get(4)).isEqualTo("4 workers: 3 ok, 0 mismatch, 1 unreachable; expected >=1.4.0 <3");
    }

    @Test
    void theSameWorkerGivenTwice_isProbedOnce() {
        long before = fleet.worker(0).probeCount();
        String sameWrittenDifferently = "http://127.0.0.1:" + fleet.worker(0).endpoint().port() + "/";

        var run = probe(v140, sameWrittenDifferently);

        assertThat(run.exit()).as(run.transcript()).isZero();
        assertThat(run.lines()).as(run.transcript()).containsExactly(v140 + "  1.4.0  ok", "1 worker: 1 ok, 0 unreachable");
        assertThat(fleet.worker(0).probeCount()).isEqualTo(before + 1);
    }

    @Test
    void progressFlag_reportsOnStderr_andStdoutStaysTheSame() {
        var run = probe("--progress", v140, v141, down);

        assertThat(run.err().lines().toList()).as(run.transcript())
                .containsExactly("probed 1/3", "probed 2/3", "probed 3/3");
        assertThat(run.lines()).hasSize(4).noneMatch(l -> l.contains("probed"));
    }

    @Test
    void withoutProgressFlag_stderrStaysEmptyWhenItIsNotATerminal() {
        var run = probe(v140, v141, down);

        assertThat(run.err()).as(run.transcript()).isEmpty();
    }

    @Test
    void workerWhoseOwnLabelsDoNotMatchTheSelector_isAMismatchAndExitsOne() throws Exception {
        try (RollcallWorker prod = RollcallWorker.builder().version("1.4.0").label("env", "prod").start();
             RollcallWorker staging = RollcallWorker.builder().version("1.4.0").label("env", "staging").start()) {
            var run = probe(prod.endpoint().url(), staging.endpoint().url(), "--selector", "env=prod");

            assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
            assertThat(run.lines()).as(run.transcript()).hasSize(3);
            assertThat(run.lines().get(0)).startsWith(prod.endpoint().url()).endsWith("1.4.0  ok");
            assertThat(run.lines().get(1)).startsWith(staging.endpoint().url())
                    .endsWith("1.4.0  mismatch: label env='staging' does not match env=prod");
            assertThat(run.lines().get(2)).isEqualTo("2 workers: 1 ok, 1 mismatch, 0 unreachable; selector env=prod");
        }
    }

    @Test
    void malformedSelector_isAUsageErrorNamingThePosition() {
        var run = probe(v140, "--selector", "env in prod");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("Invalid value for option '--selector'")
                .contains("at 7: expected '(' and a list of values, found 'p'");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void malformedRange_isAUsageErrorNamingExpect() {
        var run = probe(v140, "--expect", "^^1.4");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("Invalid value for option '--expect'").contains("'^^1.4'");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void malformedEndpoint_isAUsageErrorNamingTheArgument() {
        var run = probe(v140, "127.0.0.1:7001");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("ENDPOINT").contains("invalid worker endpoint '127.0.0.1:7001'")
                .contains("no scheme");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void durationWithoutUnit_isAUsageErrorNamingTimeout() {
        var run = probe(v140, "--timeout", "2");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("Invalid value for option '--timeout'").contains("'2'");
    }

    @Test
    void zeroConcurrency_isAUsageError() {
        var run = probe(v140, "--concurrency", "0");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("--concurrency");
    }

    @Test
    void noEndpoint_isAUsageError() {
        var run = probe("--expect", "^1.4");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("ENDPOINT");
    }

    @Test
    void endpointsFromAnArgumentFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("workers.txt");
        Files.writeString(file, "# the 1.x workers\n" + v140 + "\n" + v141 + "\n");

        var run = probe("--expect", "1.x", "@" + file);

        assertThat(run.exit()).as(run.transcript()).isZero();
        assertThat(run.lines()).containsExactly(v140 + "  1.4.0  ok", v141 + "  1.4.1  ok",
                "2 workers: 2 ok, 0 mismatch, 0 unreachable; expected 1.x");
    }

    @Test
    void protocolOption_asksTheWayTheProtocolSays() throws Exception {
        io.grpc.Server datafusion = datafusionWorker("0.9.0");
        try {
            String url = "grpc://127.0.0.1:" + datafusion.getPort();
            var run = probe(url, "--protocol", "datafusion-distributed", "--expect", "0.9.0");
            assertThat(run.exit()).as(run.transcript()).isZero();
            assertThat(run.lines()).as(run.transcript()).startsWith(url + "  0.9.0  ok");

            var rollcall = probe(url);
            assertThat(rollcall.exit()).as("it is no rollcall.v1 worker: " + rollcall.transcript()).isEqualTo(1);
            assertThat(rollcall.lines().get(0)).contains("UNIMPLEMENTED");
        } finally {
            datafusion.shutdownNow();
        }
    }

    /** A datafusion-distributed worker that never called with_version(): shown as (no version), and the reason says so. */
    @Test
    void protocolOption_aDatafusionWorkerWithoutAVersionIsShownAsNoVersion() throws Exception {
        io.grpc.Server datafusion = datafusionWorker(""); // never called with_version()
        try {
            String url = "grpc://127.0.0.1:" + datafusion.getPort();
            var run = probe(url, "--protocol", "datafusion-distributed", "--expect", "^1.4.0");
            assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
            assertThat(run.lines()).as(run.transcript()).startsWith(
                    url + "  (no version)  mismatch: no version (the worker never set one) is outside ^1.4.0");
            var any = probe(url, "--protocol", "datafusion-distributed");
            assertThat(any.exit()).as(any.transcript()).isZero();
            assertThat(any.lines()).as(any.transcript()).startsWith(url + "  (no version)  ok");
        } finally {
            datafusion.shutdownNow();
        }
    }

    @Test
    void protocolOption_thatNoJarProvidesIsAUsageErrorListingTheKnownOnes() {
        var run = probe(v140, "--protocol", "trino");

        assertThat(run.exit()).as(run.transcript()).isEqualTo(2);
        assertThat(run.err()).contains("rollcall.probe.protocol='trino'",
                "known: datafusion-distributed, grpc-health, none, rollcall");
    }

    /** A datafusion-distributed worker on a loopback port that answers {@code version} ("" : none set). */
    private static io.grpc.Server datafusionWorker(String version) throws java.io.IOException {
        return io.grpc.netty.NettyServerBuilder.forAddress(new java.net.InetSocketAddress(
                java.net.InetAddress.getLoopbackAddress(), 0)).addService(
                new dev.rollcall.protocol.datafusion.WorkerServiceGrpc.WorkerServiceImplBase() {
                    @Override
                    public void getWorkerInfo(dev.rollcall.protocol.datafusion.GetWorkerInfoRequest request,
                            io.grpc.stub.StreamObserver<dev.rollcall.protocol.datafusion.GetWorkerInfoResponse> answer) {
                        answer.onNext(dev.rollcall.protocol.datafusion.GetWorkerInfoResponse.newBuilder()
                                .setVersion(version).build());
                        answer.onCompleted();
                    }
                }).build().start();
    }
}
