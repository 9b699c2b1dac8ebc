package dev.rollcall.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exact drain over real gRPC on loopback, against a coordinator written in the test with the
 * generated stubs: a stream opened with a holder id holds the worker's close until it releases the
 * worker or the stream ends; a stream without one keeps the drain-quiet rule.
 */
class ExactDrainTest {

    private static final Logger log = LoggerFactory.getLogger(ExactDrainTest.class);
    /** Far longer than any wait the tests expect to end: a close that hits it did not end exactly. */
    private static final Duration GRACE = Duration.ofSeconds(30);

    private static RollcallWorker.Builder worker() {
        return RollcallWorker.builder().shutdownGrace(GRACE).drainQuiet(Duration.ofMillis(500));
    }

    private static boolean draining(WorkerInfoResponse a) {
        return a.getState() == ServingState.DRAINING;
    }

    @Test
    void closeWaitsForAHolderThatHasNotReleasedAndReturnsRightAfterItsRelease() throws Exception {
        RollcallWorker worker = worker().start();
        try (TestCoordinator holder = TestCoordinator.watch(worker.port(), "coordinator-a")) {
            holder.awaitAnswer(a -> true);
            await().atMost(TestCoordinator.TIMEOUT).until(() -> worker.coordinatorsHolding() == 1);

            long drainStart = System.nanoTime();
            CompletableFuture<Long> closed = CompletableFuture.supplyAsync(() -> {
                worker.close();
                return System.nanoTime();
            });
            WorkerInfoResponse drainingAnswer = holder.awaitAnswer(ExactDrainTest::draining);
            assertThat(drainingAnswer.getHolders()).as("holders in the DRAINING answer").isEqualTo(1);
            // Twice drain-quiet: a close that kept only today's rule would have returned by now.
            assertThatThrownBy(() -> closed.get(1, TimeUnit.SECONDS)).isInstanceOf(TimeoutException.class);
            assertThat(worker.coordinatorsHolding()).isEqualTo(1);

            long released = System.nanoTime();
            assertThat(holder.release(worker.instanceId()).getHolders()).as("holders left after the release").isZero();
            long closedAt = closed.get(GRACE.toSeconds() / 2, TimeUnit.SECONDS);

            long gapMillis = TimeUnit.NANOSECONDS.toMillis(closedAt - released);
            log.info("close() returned {} ms after ReleaseWorker was sent ({} ms after the drain)", gapMillis,
                    TimeUnit.NANOSECONDS.toMillis(closedAt - drainStart));
            assertThat(gapMillis).as("ms from the release to close() returning").isLessThan(5_000);
            assertThat(holder.awaitEnd().getCode()).isEqualTo(Status.Code.OK);
            assertThat(holder.latest().getHolders()).as("the last answer after the release").isZero();
            assertThat(holder.latest().getRevision()).isGreaterThan(drainingAnswer.getRevision());
        } finally {
            worker.close();
        }
    }

    @Test
    void aDrainThatOnlyHoldersWatchedHasNoQuietPeriodAfterTheLastRelease() throws Exception {
        Duration quiet = Duration.ofSeconds(20); // today's rule would wait this long after the last call started
        RollcallWorker worker = RollcallWorker.builder().shutdownGrace(GRACE).drainQuiet(quiet).start();
        try (TestCoordinator holder = TestCoordinator.watch(worker.port(), "coordinator-q");
             BufferAllocator allocator = new RootAllocator();
             FlightClient flight = FlightClient.builder(allocator,
                     Location.forGrpcInsecure("127.0.0.1", worker.port())).build()) {
            holder.awaitAnswer(a -> true);
            assertThatThrownBy(() -> flight.doAction(new Action("none")).forEachRemaining(r -> { }))
                    .as("a call that started just before the drain").isInstanceOf(FlightRuntimeException.class);
            long start = System.nanoTime();
            worker.drain();
            holder.awaitAnswer(ExactDrainTest::draining);
            holder.release(worker.instanceId());
            worker.close();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("from drain() to close() returning")
                    .isLessThan(quiet.dividedBy(2));
        } finally {
            worker.close();
        }
    }

    @Test
    void anExactDrainThatEndedStopsWithoutWaitingForAPeerThatWentSilentWithItsConnectionOpen() throws Exception {
        RollcallWorker worker = worker().start();
        try (TestCoordinator holder = TestCoordinator.watch(worker.port(), "coordinator-s");
             SilentHttp2Peer silent = SilentHttp2Peer.connect(worker.port())) {
            holder.awaitAnswer(a -> true);
            await().atMost(TestCoordinator.TIMEOUT).until(() -> worker.coordinatorsHolding() == 1);
            worker.drain();
            holder.awaitAnswer(ExactDrainTest::draining);
            assertThat(holder.release(worker.instanceId()).getHolders()).isZero();

            long start = System.nanoTime();
            worker.close();
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            log.info("close() returned {} ms after the last release, beside a silent peer", tookMillis);
            // A graceful stop sends every connection a GOAWAY and a ping and waits for the answer: the
            // silent peer held close() for the server's whole second of grace (10 s in gRPC's own).
            assertThat(tookMillis).as("ms from close() to its return, every holder let go").isLessThan(1_000);
            assertThat(holder.awaitEnd().getCode()).isEqualTo(Status.Code.OK);
        } finally {
            worker.close();
        }
    }

    @Test
    void aHolderWhoseConnectionIsCutCountsAsReleased() throws Exception {
        RollcallWorker worker = worker().start();
        try (CutProxy proxy = new CutProxy(worker.port());
             TestCoordinator holder = TestCoordinator.watch(proxy.port(), "coordinator-cut")) {
            holder.awaitAnswer(a -> true);
            await().atMost(TestCoordinator.TIMEOUT).until(() -> worker.coordinatorsHolding() == 1);
            CompletableFuture<Void> closed = CompletableFuture.runAsync(worker::close);
            holder.awaitAnswer(ExactDrainTest::draining);
            assertThat(closed).isNotDone();

            long cut = System.nanoTime();
            proxy.cut();
            closed.get(GRACE.toSeconds() / 2, TimeUnit.SECONDS);
            log.info("close() returned {} ms after the holder's connection was cut",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut));
            assertThat(worker.coordinatorsHolding()).isZero();
        } finally {
            worker.close();
        }
    }

    @Test
    void aCoordinatorKilledInTheMiddleOfADrainCountsAsReleasedWhenTheKernelEndsItsConnection() throws Exception {
        RollcallWorker worker = worker().start();
        Process holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), HolderProcess.class.getName(),
                String.valueOf(worker.port()), "coordinator-killed")
                .redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(),
                StandardCharsets.UTF_8))) {
            CompletableFuture<Boolean> holding = CompletableFuture.supplyAsync(() -> out.lines()
                    .anyMatch("HOLDING"::equals));
            assertThat(holding.get(30, TimeUnit.SECONDS)).as("the holder process started holding").isTrue();
            await().atMost(TestCoordinator.TIMEOUT).until(() -> worker.coordinatorsHolding() == 1);
            CompletableFuture<Void> closed = CompletableFuture.runAsync(worker::close);
            await().atMost(TestCoordinator.TIMEOUT).until(() -> draining(TestProbeCalls.unary(worker.port())));
            assertThat(closed).isNotDone();

            long kill = System.nanoTime();
            holder.destroyForcibly(); // SIGKILL: the kernel closes its sockets
            closed.get(GRACE.toSeconds() / 2, TimeUnit.SECONDS);
            log.info("close() returned {} ms after the holder process was killed",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - kill));
            assertThat(worker.coordinatorsHolding()).isZero();
        } finally {
            holder.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            worker.close();
        }
    }

    @Test
    void aHolderThatCancelsItsStreamCountsAsReleased() throws Exception {
        RollcallWorker worker = worker().start();
        try (TestCoordinator holder = TestCoordinator.watch(worker.port(), "coordinator-cancel")) {
            holder.awaitAnswer(a -> true);
            await().atMost(TestCoordinator.TIMEOUT).until(() -> worker.coordinatorsHolding() == 1);
            worker.drain();
            holder.awaitAnswer(ExactDrainTest::draining);
            CompletableFuture<Void> closed = CompletableFuture.runAsync(worker::close);
            holder.cancel();
            closed.get(GRACE.toSeconds() / 2, TimeUnit.SECONDS);
        } finally {
            worker.close();
        }
    }

    @Test
    void aWatcherWithoutAHolderIdKeepsTheDrainQuietRuleEvenBesideAReleasedHolder() throws Exception {
        Duration quiet = Duration.ofMillis(1_500);
        RollcallWorker worker = worker().drainQuiet(quiet).start();
        try (TestCoordinator old = TestCoordinator.watch(worker.port(), "");
             TestCoordinator holder = TestCoordinator.watch(worker.port(), "coordinator-new")) {
            old.awaitAnswer(a -> true);
            holder.awaitAnswer(a -> true);
            await().atMost(TestCoordinator.TIMEOUT).until(() -> worker.coordinatorsWatching() == 2);
            assertThat(worker.coordinatorsHolding()).isEqualTo(1);

            long start = System.nanoTime();
            worker.drain();
            holder.awaitAnswer(ExactDrainTest::draining);
            assertThat(holder.release(worker.instanceId()).getHolders()).isZero();
            worker.close();
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(tookMillis).as("ms from drain() to close() returning").isGreaterThanOrEqualTo(quiet.toMillis());
            assertThat(tookMillis).isLessThan(GRACE.toMillis());
        } finally {
            worker.close();
        }
    }

    @Test
    void anOldStyleRequestWatchesAsBeforeAndSeesNoHolders() throws Exception {
        try (RollcallWorker worker = worker().drainQuiet(Duration.ZERO).start();
             TestCoordinator old = TestCoordinator.watch(worker.port(), WorkerInfoRequest.getDefaultInstance())) {
            WorkerInfoResponse first = old.awaitAnswer(a -> true);
            assertThat(first.getInstanceId()).isEqualTo(worker.instanceId());
            assertThat(first.getHolders()).isZero();
            assertThat(worker.coordinatorsWatching()).isEqualTo(1);
            assertThat(worker.coordinatorsHolding()).isZero();
            worker.drain();
            assertThat(old.awaitAnswer(ExactDrainTest::draining).getHolders()).isZero();
        }
    }

    @Test
    void aReleaseForAnotherInstanceIsRefusedAndChangesNothing() throws Exception {
        RollcallWorker worker = worker().start();
        try (TestCoordinator holder = TestCoordinator.watch(worker.port(), "coordinator-b")) {
            holder.awaitAnswer(a -> true);
            worker.drain();
            WorkerInfoResponse draining = holder.awaitAnswer(a -> draining(a) && a.getHolders() == 1);

            assertThatThrownBy(() -> holder.release("a-predecessor\u001b[2J"))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                        assertThat(e.getStatus().getDescription())
                                .contains("instance_id 'a-predecessor\\u001b[2J'", worker.instanceId())
                                .doesNotContain("\u001b");
                    });
            assertThat(worker.coordinatorsHolding()).isEqualTo(1);
            assertThat(TestProbeCalls.unary(worker.port()).getRevision()).as("no new answer")
                    .isEqualTo(draining.getRevision());
            holder.release(worker.instanceId());
        } finally {
            worker.close();
        }
    }

    @Test
    void aBadHolderIdIsRefusedNamingTheBound() throws Exception {
        try (RollcallWorker worker = worker().drainQuiet(Duration.ZERO).start()) {
            String tooLong = "h".repeat(Holders.MAX_ID_CHARS + 1);
            try (TestCoordinator bad = TestCoordinator.watch(worker.port(), tooLong)) {
                Status status = bad.awaitEnd();
                assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                assertThat(status.getDescription()).contains("holder_id", "65 characters", "1 to 64 printable ASCII");
            }
            try (TestCoordinator bad = TestCoordinator.watch(worker.port(), "line\nbreak")) {
                Status status = bad.awaitEnd();
                assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                assertThat(status.getDescription()).contains("'line\\nbreak'").doesNotContain("\n");
            }
            try (TestCoordinator holder = TestCoordinator.watch(worker.port(), "ok")) {
                assertThatThrownBy(() -> holder.release("", worker.instanceId()))
                        .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
                                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
            }
            await().atMost(TestCoordinator.TIMEOUT).until(() -> worker.coordinatorsWatching() == 0);
        }
    }

    @Test
    void aReleaseOutsideADrainAnswersNoHolders() throws Exception {
        try (RollcallWorker worker = worker().start();
             TestCoordinator holder = TestCoordinator.watch(worker.port(), "early")) {
            holder.awaitAnswer(x -> true);
            await().atMost(TestCoordinator.TIMEOUT).until(() -> worker.coordinatorsHolding() == 1);

            // ReleaseWorkerResponse.holders: "0 when it is not draining", as the answers say
            assertThat(holder.release(worker.instanceId()).getHolders()).isZero();
            assertThat(worker.coordinatorsHolding()).as("a release outside a drain changes nothing").isEqualTo(1);
        }
    }

    @Test
    void everyAnswerWhileDrainingCountsTheHoldersAndAReleaseIsANewRevision() throws Exception {
        try (RollcallWorker worker = worker().drainQuiet(Duration.ZERO).start();
             TestCoordinator a = TestCoordinator.watch(worker.port(), "coordinator-1");
             TestCoordinator b = TestCoordinator.watch(worker.port(), "coordinator-2")) {
            a.awaitAnswer(x -> true);
            b.awaitAnswer(x -> true);
            await().atMost(TestCoordinator.TIMEOUT).until(() -> worker.coordinatorsHolding() == 2);
            assertThat(TestProbeCalls.unary(worker.port()).getHolders()).as("not draining: 0").isZero();

            worker.drain();
            WorkerInfoResponse two = a.awaitAnswer(x -> draining(x) && x.getHolders() == 2);
            assertThat(b.release(worker.instanceId()).getHolders()).isEqualTo(1);
            WorkerInfoResponse one = a.awaitAnswer(x -> draining(x) && x.getHolders() == 1);
            assertThat(one.getRevision()).isGreaterThan(two.getRevision());
            assertThat(b.release(worker.instanceId()).getHolders()).as("a release again changes nothing").isEqualTo(1);
            assertThat(worker.coordinatorsHolding()).isEqualTo(1);

            worker.resume(); // a serving worker is held again by everyone who publishes it
            a.awaitAnswer(x -> x.getState() == ServingState.SERVING && x.getRevision() > one.getRevision());
            assertThat(worker.coordinatorsHolding()).isEqualTo(2);
            worker.drain();
            a.awaitAnswer(x -> draining(x) && x.getHolders() == 2 && x.getRevision() > one.getRevision());

            a.cancel();
            WorkerInfoResponse afterCancel = b.awaitAnswer(x -> draining(x) && x.getHolders() == 1
                    && x.getRevision() > one.getRevision());
            assertThat(afterCancel.getHolders()).isEqualTo(1);
            b.release(worker.instanceId());
            assertThat(b.awaitAnswer(x -> draining(x) && x.getHolders() == 0).getRevision())
                    .isGreaterThan(afterCancel.getRevision());
        }
    }

    @Test
    void holderStreamsCountAgainstTheWatchLimitsAndAReleaseForAnIdThatHoldsNothingIsRefused() throws Exception {
        try (RollcallWorker worker = worker().drainQuiet(Duration.ZERO).maxWatches(2).start();
             TestCoordinator a = TestCoordinator.watch(worker.port(), "coordinator-1");
             TestCoordinator b = TestCoordinator.watch(worker.port(), "coordinator-2")) {
            a.awaitAnswer(x -> true);
            b.awaitAnswer(x -> true);
            try (TestCoordinator c = TestCoordinator.watch(worker.port(), "coordinator-3")) {
                Status refused = c.awaitEnd();
                assertThat(refused.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(refused.getDescription()).contains("rollcall.worker.max-watches=2");
            }
            assertThat(worker.coordinatorsHolding()).isEqualTo(2);

            worker.drain();
            assertThatThrownBy(() -> a.release("stranger-1", worker.instanceId()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
                        assertThat(e.getStatus().getDescription()).as("the id by its first characters only")
                                .contains("holder_id 'stran…' holds nothing").doesNotContain("stranger-1");
                    });
            for (int i = 0; i < 1_100; i++) { // more than any bound the worker keeps
                String id = "stranger-" + i;
                assertThatThrownBy(() -> a.release(id, worker.instanceId()))
                        .isInstanceOfSatisfying(StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
            }
            assertThat(worker.coordinatorsHolding()).as("nothing released").isEqualTo(2);
            assertThat(a.release(worker.instanceId()).getHolders()).isEqualTo(1);
            assertThat(b.release(worker.instanceId()).getHolders()).isZero();
        }
    }

    @Test
    void releasedIdsWhoseStreamsEndedNeverCrowdOutAHoldersRelease() throws Exception {
        try (RollcallWorker worker = worker().drainQuiet(Duration.ZERO).maxWatches(2).start();
             TestCoordinator keeper = TestCoordinator.watch(worker.port(), "keeper")) {
            keeper.awaitAnswer(x -> true);
            worker.drain();
            for (int i = 0; i < 5; i++) { // each holds, releases, and goes: more ids than the limit keeps
                try (TestCoordinator passing = TestCoordinator.watch(worker.port(), "passing-" + i)) {
                    passing.awaitAnswer(x -> draining(x) && x.getHolders() == 2);
                    assertThat(passing.release(worker.instanceId()).getHolders()).isEqualTo(1);
                }
                await().atMost(TestCoordinator.TIMEOUT).until(() -> worker.coordinatorsWatching() == 1);
            }
            assertThat(keeper.release(worker.instanceId()).getHolders()).isZero();
        }
    }

    /**
     * The other pairing, at the wire: a worker from before exact drain (its service has only
     * WorkerInfo and WatchWorkerInfo, as the older generated code registered it) ignores a holder id
     * and answers ReleaseWorker UNIMPLEMENTED, which a new coordinator takes as "keep today's rule".
     */
    @Test
    void anOlderWorkerIgnoresTheHolderIdAndAnswersReleaseUnimplemented() throws Exception {
        WorkerInfoResponse answer = WorkerInfoResponse.newBuilder().setVersion("1.3.0").setInstanceId("old-1").build();
        ServerServiceDefinition older = ServerServiceDefinition.builder(WorkerServiceGrpc.SERVICE_NAME)
                .addMethod(WorkerServiceGrpc.getWorkerInfoMethod(), ServerCalls.asyncUnaryCall((request, out) -> {
                    out.onNext(answer);
                    out.onCompleted();
                }))
                .addMethod(WorkerServiceGrpc.getWatchWorkerInfoMethod(),
                        ServerCalls.asyncServerStreamingCall((request, out) -> out.onNext(answer)))
                .build();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(older)
                .build().start();
        try (TestCoordinator coordinator = TestCoordinator.watch(server.getPort(), "coordinator-new")) {
            assertThat(coordinator.awaitAnswer(a -> true).getInstanceId()).isEqualTo("old-1");
            assertThatThrownBy(() -> coordinator.release("old-1"))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
                            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
        } finally {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** The unary answer, as a probe reads it. */
    static final class TestProbeCalls {
        static WorkerInfoResponse unary(int port) throws InterruptedException {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
            try {
                return WorkerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
                        .workerInfo(WorkerInfoRequest.getDefaultInstance());
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
