package dev.rollcall.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Stream heartbeats, in virtual time: what a coordinator asking {@code heartbeat_millis} can rely on. */
class HeartbeatTest {

    private final VirtualTime time = new VirtualTime();
    private final WorkerInfoService service = WorkerInfoService.builder().version("1.0.0")
            .time(time.executor(), time, time).build();
    private int port = 40_000;

    private FakeWatch watch(int heartbeatMillis) {
        FakeWatch w = FakeWatch.open(service, new InetSocketAddress("127.0.0.1", port++), heartbeatMillis, time::read);
        time.runUntilIdle();
        return w;
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    @Test
    void aStreamThatAsksForHeartbeatsHearsTheSameAnswerAgainBeforeItHasBeenSilentThatLong() {
        FakeWatch w = watch(2_000);
        assertThat(w.sent).singleElement().satisfies(r -> assertThat(r.getHeartbeatMillis()).isEqualTo(2_000));

        time.advance(Duration.ofMillis(1_899));
        assertThat(w.sent).hasSize(1);
        time.advance(Duration.ofMillis(1));
        assertThat(w.sent).hasSize(2);
        time.advance(Duration.ofMillis(1_900));
        assertThat(w.sent).hasSize(3);
        assertThat(w.sent).as("a heartbeat repeats the answer, revision and all").containsOnly(w.sent.get(0));
    }

    @Test
    void aChangeCountsAsSentSoTheNextHeartbeatComesAnIntervalAfterIt() {
        FakeWatch w = watch(2_000);
        time.advance(Duration.ofMillis(1_000));
        service.labels(Map.of("zone", "b"));
        time.runUntilIdle();
        assertThat(w.sent).hasSize(2);
        long changed = w.sent.get(1).getRevision();
        assertThat(changed).isGreaterThan(w.sent.get(0).getRevision());

        time.advance(Duration.ofMillis(1_899)); // 2,899 ms in: the first answer is 2.9 s old, the change 1.9 s
        assertThat(w.sent).hasSize(2);
        time.advance(Duration.ofMillis(1));
        assertThat(w.sent).hasSize(3);
        assertThat(w.last().getRevision()).isEqualTo(changed);
        assertThat(w.last().getLabelsMap()).containsEntry("zone", "b");
    }

    @Test
    void theIntervalIsClampedToOneSecondAndOneMinuteAndEveryAnswerSaysWhatWasGranted() {
        FakeWatch tooShort = watch(1);
        FakeWatch tooLong = watch(600_000);
        FakeWatch none = watch(0);
        service.state(ServingState.DRAINING);
        time.advance(Duration.ofMinutes(3));

        assertThat(tooShort.sent).extracting(WorkerInfoResponse::getHeartbeatMillis).containsOnly(1_000);
        assertThat(tooShort.sent).hasSizeGreaterThan(180);
        assertThat(tooLong.sent).extracting(WorkerInfoResponse::getHeartbeatMillis).containsOnly(60_000);
        assertThat(tooLong.sent).hasSize(5); // at 0, the drain, then after 59.9 s of silence, three times
        assertThat(none.sent).as("no heartbeat asked: only the answer and the change")
                .extracting(WorkerInfoResponse::getHeartbeatMillis).containsExactly(0, 0);
        assertThat(WorkerInfoService.grantedHeartbeat(5_000)).isEqualTo(5_000);
        assertThat(WorkerInfoService.grantedHeartbeat(Integer.toUnsignedLong(-1))).isEqualTo(60_000);
    }

    @Test
    void aStreamIsNeverSilentForLongerThanItWasGrantedWhateverChangesComeWhen() {
        Random random = new Random(34);
        List<FakeWatch> watches = new ArrayList<>();
        for (int millis : new int[] {1_000, 1_500, 2_000, 5_000, 5_000, 60_000}) {
            watches.add(watch(millis));
        }
        long start = time.read();
        for (int i = 0; i < 400; i++) {
            time.advance(Duration.ofMillis(random.nextInt(1_200)));
            if (random.nextInt(4) == 0) {
                service.labels(Map.of("round", Integer.toString(i)));
            }
        }
        long end = time.read();
        for (FakeWatch w : watches) {
            int granted = w.sent.get(0).getHeartbeatMillis();
            List<Long> at = new ArrayList<>(w.sent.size() + 2);
            at.add(start);
            at.addAll(w.sentAt);
            at.add(end);
            long longest = 0;
            for (int i = 1; i < at.size(); i++) {
                longest = Math.max(longest, at.get(i) - at.get(i - 1));
            }
            assertThat(millis(longest)).as("longest silence of a stream granted %d ms", granted)
                    .isLessThanOrEqualTo(granted);
            assertThat(w.sent).extracting(WorkerInfoResponse::getRevision).isSorted();
        }
    }

    @Test
    void workersWhoseStreamsOpenedApartSendTheirHeartbeatsOnTheSameTicksOfTheWallClock() {
        long wallAhead = Duration.ofMillis(17).toNanos(); // the ticks are the wall clock's, not the ticker's
        List<FakeWatch> watches = new ArrayList<>();
        long start = time.read();
        for (int opened : new int[] {0, 9, 21, 32}) { // milliseconds after the first, all before its tick
            time.advance(Duration.ofNanos(start + Duration.ofMillis(opened).toNanos() - time.read()));
            WorkerInfoService worker = WorkerInfoService.builder().version("1.0.0").time(time.executor(), time, time)
                    .wallClock(() -> time.read() + wallAhead).build();
            watches.add(FakeWatch.open(worker, new InetSocketAddress("127.0.0.1", port++), 2_000, time::read));
            time.runUntilIdle();
        }
        time.advance(Duration.ofSeconds(20));

        List<Long> first = heartbeats(watches.get(0));
        assertThat(first).hasSizeGreaterThanOrEqualTo(9);
        assertThat(first).allSatisfy(at -> assertThat(Math.floorMod(at + wallAhead, WatchStreams.GRID_NANOS))
                .as("a heartbeat at %d ns off a tick of the wall clock", at).isZero());
        assertThat(watches).allSatisfy(w -> assertThat(heartbeats(w))
                .as("one burst a tick for the coordinator: the same instants as the first worker's").isEqualTo(first));
    }

    @Test
    void aStepOfTheWallClockLeavesNoStreamSilentForLongerThanItWasGranted() {
        long[] wallAhead = {Duration.ofMillis(3).toNanos()};
        WorkerInfoService worker = WorkerInfoService.builder().version("1.0.0").time(time.executor(), time, time)
                .wallClock(() -> time.read() + wallAhead[0]).build();
        FakeWatch w = FakeWatch.open(worker, new InetSocketAddress("127.0.0.1", port++), 1_000, time::read);
        time.runUntilIdle();
        long start = time.read();
        Random random = new Random(42);
        for (int i = 0; i < 200; i++) {
            time.advance(Duration.ofMillis(random.nextInt(700)));
            if (random.nextInt(5) == 0) { // NTP steps it: back an hour, or forward a few milliseconds
                wallAhead[0] += random.nextBoolean() ? -Duration.ofHours(1).toNanos() + 23_000_000L : 7_000_000L;
            }
        }
        List<Long> at = new ArrayList<>(w.sentAt);
        at.add(time.read());
        long longest = 0;
        for (int i = 1; i < at.size(); i++) {
            longest = Math.max(longest, at.get(i) - at.get(i - 1));
        }
        assertThat(at.get(0)).isLessThanOrEqualTo(start);
        assertThat(millis(longest)).isLessThanOrEqualTo(1_000);
    }

    /** When {@code w} heard its heartbeats: every answer after the first, none of which was a change. */
    private static List<Long> heartbeats(FakeWatch w) {
        return w.sentAt.subList(1, w.sentAt.size());
    }

    @Test
    void oneTimerServesEveryStreamAndNoneIsLeftWhenTheyAreGone() {
        List<FakeWatch> watches = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            watches.add(watch(1_000 + 37 * i));
        }
        for (int i = 0; i < 20; i++) {
            time.advance(Duration.ofMillis(450));
            assertThat(time.pendingTimers()).isEqualTo(1);
        }
        assertThat(watches).allSatisfy(w -> assertThat(w.sent).hasSizeGreaterThan(1));

        watches.forEach(FakeWatch::cancel);
        time.advance(Duration.ofMinutes(2));
        assertThat(time.pendingTimers()).isZero();
        assertThat(service.heartbeatTimerSet()).isFalse();
    }

    @Test
    void aStreamThatTakesNothingNowGetsItsHeartbeatWhenItCanAgain() {
        FakeWatch w = watch(1_000);
        w.ready(false);
        time.advance(Duration.ofSeconds(5));
        assertThat(w.sent).hasSize(1);
        w.ready(true);
        assertThat(w.sent).hasSize(2);
        assertThat(w.last()).isEqualTo(w.sent.get(0));
    }

    @Test
    void aStreamThatTakesNothingGetsOnlyTheNewestAnswerWhenItCanAgain() {
        FakeWatch w = watch(0);
        w.ready(false);
        for (int i = 0; i < 10; i++) {
            service.labels(Map.of("round", Integer.toString(i)));
            time.runUntilIdle();
        }
        w.ready(true);
        assertThat(w.sent).hasSize(2);
        assertThat(w.last().getLabelsMap()).containsEntry("round", "9");
        assertThat(w.last().getRevision()).isEqualTo(service.revision());
    }
}
