package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import dev.rollcall.it.polyglot.ReferenceWorker.Language;
import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.Visibility;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.testkit.Closer;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The rules of docs/protocol.md that a worker keeps on its own, checked on the Node and the Python
 * reference worker over a plain gRPC client: what the stream sends when, revisions, heartbeats and
 * their clamp, the newest answer for a coordinator that stopped reading, unknown request fields, and
 * the bounds each puts on its own port.
 */
class ReferenceWorkerProtocolTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @AutoClose
    private final Closer closer = new Closer();

    private ReferenceWorker start(Language language, String... args) {
        return closer.add(ReferenceWorker.start(language, "1.4.0", args));
    }

    private WorkerServiceGrpc.WorkerServiceBlockingStub unary(ReferenceWorker w) {
        return WorkerServiceGrpc.newBlockingStub(channel(w)).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private ManagedChannel channel(ReferenceWorker w) {
        ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", w.port()).usePlaintext().build();
        closer.add(() -> c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return c;
    }

    /** One WatchWorkerInfo stream: its answers in order, then its end. */
    private static final class Watch implements ClientResponseObserver<WorkerInfoRequest, WorkerInfoResponse> {
        private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
        private volatile ClientCallStreamObserver<WorkerInfoRequest> call;

        private boolean manual;

        @Override
        public void beforeStart(ClientCallStreamObserver<WorkerInfoRequest> requestStream) {
            call = requestStream;
            if (manual) {
                requestStream.disableAutoRequestWithInitial(1);
            }
        }

        /** Reads again, as fast as the answers come. */
        void read() {
            call.request(Integer.MAX_VALUE);
        }

        @Override
        public void onNext(WorkerInfoResponse value) {
            events.add(value);
        }

        @Override
        public void onError(Throwable t) {
            events.add(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            events.add(Status.OK);
        }

        WorkerInfoResponse next() throws InterruptedException {
            Object e = events.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(e).as("the next answer on the stream").isInstanceOf(WorkerInfoResponse.class);
            return (WorkerInfoResponse) e;
        }

        Status end() throws InterruptedException {
            Object e = events.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(e).as("the end of the stream").isInstanceOf(Status.class);
            return (Status) e;
        }

        void cancel() {
            call.cancel("done", null);
        }
    }

    /** A stream that takes only its first answer until {@link Watch#read} asks for more (manual flow control). */
    private Watch slowWatch(ManagedChannel channel) {
        Watch w = new Watch();
        w.manual = true;
        WorkerServiceGrpc.newStub(channel).watchWorkerInfo(WorkerInfoRequest.getDefaultInstance(), w);
        return w;
    }

    private Watch watch(ManagedChannel channel, int heartbeatMillis) {
        return holderWatch(channel, heartbeatMillis, "");
    }

    /** A stream whose coordinator holds the worker under {@code holderId} (exact drain, W18); "" for none. */
    private Watch holderWatch(ManagedChannel channel, int heartbeatMillis, String holderId) {
        Watch w = new Watch();
        WorkerServiceGrpc.newStub(channel).watchWorkerInfo(
                WorkerInfoRequest.newBuilder().setHeartbeatMillis(heartbeatMillis).setHolderId(holderId).build(), w);
        return w;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void theFirstAnswerIsTheUnaryAnswerThenOnePerChangeWithAGrowingRevisionAndOneInstanceId(Language language)
            throws Exception {
        ReferenceWorker w = start(language, "--label", "zone=eu-1", "--service", "demo.v1.Orders=internal");
        WorkerInfoResponse unary = unary(w).workerInfo(WorkerInfoRequest.getDefaultInstance());
        assertThat(unary.getVersion()).isEqualTo("1.4.0");
        assertThat(unary.getInstanceId()).isEqualTo(w.instanceId());
        assertThat(unary.getLabelsMap()).containsExactlyEntriesOf(Map.of("zone", "eu-1"));
        assertThat(unary.getServices(0).getName()).isEqualTo("demo.v1.Orders");
        assertThat(unary.getServices(0).getVisibility()).isEqualTo(Visibility.VISIBILITY_INTERNAL);
        assertThat(unary.getRevision()).isPositive();
        assertThat(unary.getHeartbeatMillis()).as("the unary answer grants no heartbeat").isZero();

        Watch stream = watch(channel(w), 0);
        assertThat(stream.next()).as("the stream's first answer is the unary answer").isEqualTo(unary);

        w.command("label zone=eu-2");
        WorkerInfoResponse relabelled = stream.next();
        assertThat(relabelled.getLabelsMap()).containsEntry("zone", "eu-2");
        w.command("drain");
        WorkerInfoResponse draining = stream.next();
        assertThat(draining.getState()).isEqualTo(ServingState.DRAINING);
        w.command("resume");
        WorkerInfoResponse resumed = stream.next();
        assertThat(resumed.getState()).isEqualTo(ServingState.SERVING);
        assertThat(List.of(unary.getRevision(), relabelled.getRevision(), draining.getRevision(),
                resumed.getRevision())).as("revisions").isSorted().doesNotHaveDuplicates();
        assertThat(List.of(relabelled, draining, resumed)).extracting(WorkerInfoResponse::getInstanceId)
                .containsOnly(w.instanceId());
        assertThat(unary(w).workerInfo(WorkerInfoRequest.getDefaultInstance())).as("the unary answer now")
                .isEqualTo(resumed);
        stream.cancel();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void heartbeatsAreClampedRepeatTheAnswerWithItsRevisionAndAreSaidInEveryAnswer(Language language) throws Exception {
        ReferenceWorker w = start(language);
        ManagedChannel channel = channel(w);
        Watch tooShort = watch(channel, 10);
        Watch tooLong = watch(channel, 3_600_000);
        Watch none = watch(channel, 0);
        WorkerInfoResponse first = tooShort.next();
        assertThat(first.getHeartbeatMillis()).as("10 ms asked, raised to the floor").isEqualTo(1000);
        assertThat(tooLong.next().getHeartbeatMillis()).as("an hour asked, lowered to the ceiling").isEqualTo(60_000);
        assertThat(none.next().getHeartbeatMillis()).as("none asked").isZero();

        WorkerInfoResponse repeated = tooShort.next(); // within WAIT: at most 1 s later
        assertThat(repeated).as("a heartbeat repeats the answer, revision and all").isEqualTo(first);
        w.command("drain");
        WorkerInfoResponse drained = tooShort.next();
        assertThat(drained.getState()).isEqualTo(ServingState.DRAINING);
        assertThat(drained.getHeartbeatMillis()).as("said in every answer of the stream").isEqualTo(1000);
        assertThat(none.next().getState()).as("a stream without heartbeats gets the change").isEqualTo(ServingState.DRAINING);
        assertThat(none.events).as("and nothing else: no heartbeat was asked").isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void aCoordinatorThatStopsReadingGetsTheNewestAnswerWhenItReadsAgainAndNeverAnOlderOneAfterANewer(Language language)
            throws Exception {
        ReferenceWorker w = start(language);
        // A 1 KiB HTTP/2 window: a dozen answers fill it while the coordinator does not read.
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", w.port()).usePlaintext()
                .flowControlWindow(1024).build();
        closer.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        Watch stream = slowWatch(channel);
        WorkerInfoResponse first = stream.next();
        int changes = 200;
        for (int i = 1; i <= changes; i++) {
            w.command("label n=" + i);
        }
        await().atMost(WAIT).until(() -> w.printed(l -> l.contains("label n on standard input")
                && (l.contains("\"" + changes + "\"") || l.contains("'" + changes + "'"))));

        stream.read();
        List<WorkerInfoResponse> got = new ArrayList<>(List.of(first));
        while (!String.valueOf(changes).equals(got.get(got.size() - 1).getLabelsMap().get("n"))) {
            got.add(stream.next());
        }
        assertThat(got).extracting(WorkerInfoResponse::getRevision).as("revisions, as read").isSorted()
                .doesNotHaveDuplicates();
        assertThat(got).as("answers read for %d changes made while the coordinator did not read", changes)
                .hasSizeLessThan(changes / 2);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void unknownRequestFieldsAreIgnoredAndAnOversizedRequestIsRefused(Language language) {
        ReferenceWorker w = start(language, "--max-request-bytes", "4096");
        WorkerInfoRequest newer = WorkerInfoRequest.newBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
                .addField(15, UnknownFieldSet.Field.newBuilder().addLengthDelimited(ByteString.copyFromUtf8("from a newer"
                        + " coordinator")).build()).build()).build();
        assertThat(unary(w).workerInfo(newer).getVersion()).as("a field it does not know is ignored").isEqualTo("1.4.0");

        WorkerInfoRequest huge = WorkerInfoRequest.newBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
                .addField(15, UnknownFieldSet.Field.newBuilder().addLengthDelimited(ByteString.copyFrom(new byte[8192]))
                        .build()).build()).build();
        assertThatThrownBy(() -> unary(w).workerInfo(huge)).isInstanceOfSatisfying(StatusRuntimeException.class,
                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
        assertThat(unary(w).workerInfo(WorkerInfoRequest.getDefaultInstance()).getVersion()).as("and it still answers")
                .isEqualTo("1.4.0");
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void watchStreamsPastItsLimitsAreRefusedNamingTheLimitWhileTheUnaryCallStillAnswers(Language language)
            throws Exception {
        ReferenceWorker w = start(language, "--max-watches", "3", "--max-watches-per-connection", "2");
        ManagedChannel one = channel(w);
        ManagedChannel two = channel(w);
        Watch a = watch(one, 0);
        a.next();
        watch(one, 0).next();
        Watch refusedOnOne = watch(one, 0);
        assertThat(refusedOnOne.end()).satisfies(s -> {
            assertThat(s.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(s.getDescription()).contains("--max-watches-per-connection=2");
        });
        watch(two, 0).next();
        assertThat(watch(two, 0).end()).satisfies(s -> {
            assertThat(s.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(s.getDescription()).contains("--max-watches=3");
        });
        assertThat(unary(w).workerInfo(WorkerInfoRequest.getDefaultInstance()).getVersion()).isEqualTo("1.4.0");

        a.cancel();
        await().atMost(WAIT).until(() -> w.printed(l -> l.contains("ended (2 open)")));
        assertThat(watch(two, 0).next().getVersion()).as("a place freed is taken again").isEqualTo("1.4.0");
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void sigtermPushesDrainingThenEndsTheStreamsAndExitsZero(Language language) throws Exception {
        ReferenceWorker w = start(language, "--drain-quiet-ms", "200");
        Watch stream = watch(channel(w), 5000);
        assertThat(stream.next().getState()).isEqualTo(ServingState.SERVING);
        w.terminate();
        WorkerInfoResponse last = stream.next();
        assertThat(last.getState()).isEqualTo(ServingState.DRAINING);
        assertThat(last.getHeartbeatMillis()).isEqualTo(5000);
        Status end = stream.end();
        assertThat(end.getCode()).as("the worker ends its streams (%s)", end).isEqualTo(Status.Code.OK);
        assertThat(w.awaitExit(WAIT)).as("exit code; output:\n%s", w.output()).isZero();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void aHolderThatNeverReleasesHoldsTheStopOnlyUntilTheGrace(Language language) throws Exception {
        ReferenceWorker w = start(language, "--shutdown-grace-ms", "1500");
        Watch silent = holderWatch(channel(w), 0, "silent-coordinator");
        assertThat(silent.next().getHolders()).as("serving: 0").isZero();
        long stoppedAt = w.terminate();
        WorkerInfoResponse draining = silent.next();
        assertThat(draining.getState()).isEqualTo(ServingState.DRAINING);
        assertThat(draining.getHolders()).as("the silent holder holds it").isEqualTo(1);

        assertThat(w.awaitExit(WAIT)).isZero();
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt);
        assertThat(took).as("held until the 1500 ms grace, no longer").isBetween(1400L, 1500L + WAIT.toMillis() / 2);
        assertThat(w.output()).as("by its first characters only").contains("1 holders still hold it ('silent…' from")
                .doesNotContain("silent-coordinator");
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void aHolderWhoseStreamEndsCountsAsReleasedAndTheStopNeedsNoQuietPeriod(Language language) throws Exception {
        ReferenceWorker w = start(language, "--shutdown-grace-ms", "60000", "--drain-quiet-ms", "60000");
        Watch holder = holderWatch(channel(w), 0, "leaving-coordinator");
        holder.next();
        w.terminate();
        assertThat(holder.next().getHolders()).isEqualTo(1);

        holder.cancel(); // a coordinator whose stream ends counts as released (W19)
        assertThat(w.awaitExit(WAIT)).as("exit code, well before the quiet period or the grace; output:\n%s", w.output())
                .isZero();
        assertThat(w.output()).contains("every holder let go");
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void aReleaseWhoseIdHoldsNothingIsRefusedLeavesNoTraceAndTheHolderStillHolds(Language language) throws Exception {
        String secret = "the-coordinators-holder-id-for-this-worker";
        ReferenceWorker w = start(language, "--shutdown-grace-ms", "60000", "--drain-quiet-ms", "60000",
                "--max-watches", "4");
        ManagedChannel channel = channel(w);
        Watch holder = holderWatch(channel, 0, secret);
        String instance = holder.next().getInstanceId();
        w.terminate();
        assertThat(holder.next().getHolders()).isEqualTo(1);

        WorkerServiceGrpc.WorkerServiceBlockingStub stranger = unary(w);
        for (int i = 0; i < 20; i++) { // far more than the four ids it could keep
            String id = "stranger-" + i;
            assertThatThrownBy(() -> stranger.releaseWorker(ReleaseWorkerRequest.newBuilder().setHolderId(id)
                    .setInstanceId(instance).build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
                        assertThat(e.getStatus().getDescription()).contains("holds nothing").doesNotContain(id);
                    });
        }
        await().during(Duration.ofMillis(700)).atMost(WAIT).until(w::isAlive); // still held by its holder

        assertThat(unary(w).releaseWorker(ReleaseWorkerRequest.newBuilder().setHolderId(secret)
                .setInstanceId(instance).build()).getHolders()).as("the holder's own release").isZero();
        assertThat(w.awaitExit(WAIT)).as("exit code, well before the grace; output:\n%s", w.output()).isZero();
        assertThat(w.output()).as("the holder id is never logged whole").contains("every holder let go")
                .contains("'the-co…'").doesNotContain(secret);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void aWorkerWhoseAnswerBreaksACoordinatorsBoundRefusesToStartNamingTheBound(Language language) {
        String tooLong = "1.0.0+" + "x".repeat(300);
        assertThatThrownBy(() -> ReferenceWorker.start(language, tooLong))
                .hasMessageContaining("version is 306 characters long (at most 256)");
    }
}
