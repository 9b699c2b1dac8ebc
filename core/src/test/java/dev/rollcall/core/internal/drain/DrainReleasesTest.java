package dev.rollcall.core.internal.drain;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.internal.serial.VirtualTime;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * When the coordinator lets a draining worker go, in virtual time: after a publish without it, once
 * no lease holds a snapshot that lists it; retries 250 ms apart on UNAVAILABLE, none on
 * FAILED_PRECONDITION, NOT_FOUND or UNIMPLEMENTED; a resume or a new instance starts over.
 */
class DrainReleasesTest {

    private static final WorkerEndpoint A = WorkerEndpoint.of("127.0.0.1", 7001);
    private static final WorkerEndpoint B = WorkerEndpoint.of("127.0.0.1", 7002);

    private static final HolderIds HOLDER_IDS = HolderIds.random();

    private record Sent(String url, String holder, String instance, Consumer<Status> then) {
    }

    private final VirtualTime time = new VirtualTime();
    private final List<Sent> sent = new ArrayList<>();
    private long numbers;
    private final DrainReleases drains = new DrainReleases(time.context(),
            (url, holder, instance, then) -> sent.add(new Sent(url, holder, instance, then)), HOLDER_IDS,
            snapshot());

    private FleetSnapshot snapshot(WorkerEndpoint... listed) {
        FleetSnapshot.Builder b = FleetSnapshot.builder(numbers++);
        for (WorkerEndpoint e : listed) {
            b.status(new WorkerStatus(e, WorkerStatus.State.COMPATIBLE, "", Optional.of(WorkerInfo.of(e, "1.0.0"))));
        }
        return b.build();
    }

    /** A is listed, then drains and is published without. */
    private void drainA() {
        drains.published(snapshot(A, B));
        drains.answered(A.url(), "i-1", ServingState.DRAINING);
        time.runUntilIdle();
        assertThat(sent).as("released while the current snapshot still lists it").isEmpty();
        drains.published(snapshot(B));
        time.runUntilIdle();
    }

    private void answer(int index, Status.Code code) {
        sent.get(index).then().accept(code.toStatus());
        time.runUntilIdle();
    }

    @Test
    void aWorkerNoLeaseHoldsIsReleasedAtThePublishWithoutIt() {
        drainA();
        assertThat(sent).singleElement().satisfies(s -> {
            assertThat(s.url()).isEqualTo(A.url());
            assertThat(s.holder()).isEqualTo(HOLDER_IDS.of(A.url()));
            assertThat(s.instance()).isEqualTo("i-1");
        });
        answer(0, Status.Code.OK);
        drains.published(snapshot(B));
        time.advance(Duration.ofSeconds(10));
        assertThat(sent).as("released once").hasSize(1);
    }

    @Test
    void aLeaseOnAnOldSnapshotHoldsTheWorkerUntilItsLastLeaseCloses() {
        drains.published(snapshot(A, B));
        LeaseTable.Slot first = drains.leases().acquire();
        LeaseTable.Slot second = drains.leases().acquire();
        drains.answered(A.url(), "i-1", ServingState.DRAINING);
        drains.published(snapshot(B));
        time.advance(Duration.ofSeconds(5));
        assertThat(sent).as("two leases hold a snapshot that lists A").isEmpty();
        first.release();
        time.runUntilIdle();
        assertThat(sent).as("one lease still holds it").isEmpty();
        second.release();
        time.runUntilIdle();
        assertThat(sent).as("released when the last lease closed").hasSize(1);
    }

    @Test
    void aLeaseOnASnapshotWithoutTheWorkerDoesNotHoldIt() {
        drains.published(snapshot(A, B));
        drains.answered(A.url(), "i-1", ServingState.DRAINING);
        drains.published(snapshot(B));
        LeaseTable.Slot later = drains.leases().acquire();
        time.runUntilIdle();
        assertThat(sent).hasSize(1);
        later.release();
    }

    @Test
    void closingTheLastLeaseOfAnOldSnapshotQueuesNothingWhenNothingDrains() {
        drains.published(snapshot(A, B));
        LeaseTable.Slot lease = drains.leases().acquire();
        drains.published(snapshot(A, B));
        lease.release();
        assertThat(time.queuedTasks()).as("tasks the close queued").isZero();
        assertThat(drains.leases().olderWithLeases()).isLessThanOrEqualTo(1);
        drains.published(snapshot(A, B));
        assertThat(drains.leases().olderWithLeases()).as("old slots kept once their leases closed").isZero();
    }

    @Test
    void unavailableIsRetried250MillisecondsLaterAndBounded() {
        drainA();
        answer(0, Status.Code.UNAVAILABLE);
        time.advance(Duration.ofMillis(249));
        assertThat(sent).as("before the retry delay").hasSize(1);
        time.advance(Duration.ofMillis(1));
        assertThat(sent).as("at 250 ms").hasSize(2);
        answer(1, Status.Code.DEADLINE_EXCEEDED);
        time.advance(Duration.ofMillis(250));
        assertThat(sent).hasSize(3);
        for (int i = 2; i < DrainReleases.MAX_ATTEMPTS; i++) {
            answer(i, Status.Code.UNAVAILABLE);
            time.advance(Duration.ofMillis(250));
        }
        assertThat(sent).hasSize(DrainReleases.MAX_ATTEMPTS);
        answer(DrainReleases.MAX_ATTEMPTS - 1, Status.Code.UNAVAILABLE);
        time.advance(Duration.ofMinutes(1));
        assertThat(sent).as("no retry after the last attempt").hasSize(DrainReleases.MAX_ATTEMPTS);
    }

    @Test
    void failedPreconditionNotFoundAndUnimplementedAreNotRetried() {
        drainA();
        answer(0, Status.Code.FAILED_PRECONDITION);
        time.advance(Duration.ofMinutes(1));
        assertThat(sent).hasSize(1);

        drains.answered(B.url(), "old", ServingState.DRAINING);
        drains.published(snapshot());
        time.runUntilIdle();
        assertThat(sent).hasSize(2);
        answer(1, Status.Code.UNIMPLEMENTED);
        time.advance(Duration.ofMinutes(1));
        assertThat(sent).hasSize(2);

        drains.answered(A.url(), "i-2", ServingState.DRAINING); // a new process: its drain is another one
        time.runUntilIdle();
        assertThat(sent).hasSize(3);
        answer(2, Status.Code.NOT_FOUND); // the id holds nothing there: its stream ended, which let it go
        time.advance(Duration.ofMinutes(1));
        assertThat(sent).hasSize(3);
    }

    @Test
    void aResumeOrANewInstanceStartsOver() {
        drainA();
        answer(0, Status.Code.OK);
        drains.answered(A.url(), "i-1", ServingState.DRAINING); // a heartbeat, a new stream
        time.runUntilIdle();
        assertThat(sent).as("the same drain is released once").hasSize(1);

        drains.answered(A.url(), "i-1", ServingState.SERVING);
        drains.published(snapshot(A, B));
        drains.answered(A.url(), "i-1", ServingState.DRAINING);
        drains.published(snapshot(B));
        time.runUntilIdle();
        assertThat(sent).as("a drain after a resume").hasSize(2);
        answer(1, Status.Code.OK);

        drains.answered(A.url(), "i-2", ServingState.DRAINING);
        time.runUntilIdle();
        assertThat(sent).as("a new process at the address").hasSize(3);
        assertThat(sent.get(2).instance()).isEqualTo("i-2");
    }

    @Test
    void aResumeWhileARetryWaitsCancelsIt() {
        drainA();
        answer(0, Status.Code.UNAVAILABLE);
        drains.answered(A.url(), "i-1", ServingState.SERVING);
        time.advance(Duration.ofSeconds(5));
        assertThat(sent).hasSize(1);
    }

    @Test
    void aWorkerThatLeftDiscoveryIsHeldWhileALeaseListsItThenFreed() {
        AtomicInteger freed = new AtomicInteger();
        drains.onLeaverFree(freed::incrementAndGet);
        drains.published(snapshot(A, B));
        LeaseTable.Slot lease = drains.leases().acquire();
        drains.left(A.url(), "i-1");
        drains.published(snapshot(B));
        time.runUntilIdle();
        assertThat(drains.holdsLeaver(A.url())).as("held by the open lease").isTrue();
        assertThat(freed).hasValue(0);
        lease.release();
        time.runUntilIdle();
        assertThat(drains.holdsLeaver(A.url())).isFalse();
        assertThat(freed).hasValue(1);
        assertThat(sent).as("closing its connection is its release").isEmpty();
    }

    @Test
    void aWorkerThatLeavesTwiceIsCountedOnceAndNothingIsLeftHeldOnceItIsFreed() {
        AtomicInteger freed = new AtomicInteger();
        drains.onLeaverFree(freed::incrementAndGet);
        drains.published(snapshot(A, B));
        LeaseTable.Slot lease = drains.leases().acquire();
        drains.left(A.url(), "i-1");
        drains.left(A.url(), "i-1"); // it came back and left again while the lease still held it
        drains.published(snapshot(B));
        lease.release();
        time.runUntilIdle();
        assertThat(freed).hasValue(1);
        LeaseTable.Slot later = drains.leases().acquire();
        drains.published(snapshot(B));
        later.release();
        assertThat(time.queuedTasks()).as("tasks a lease close queued with nothing held").isZero();
    }

    @Test
    void eachWorkerHasItsOwnHolderIdTheSameOnEveryRelease() {
        String a = HOLDER_IDS.of(A.url());
        assertThat(a).as("printable ASCII within the protocol's 64 characters").matches("[A-Za-z0-9_-]{43}");
        assertThat(HOLDER_IDS.of(A.url())).as("the same worker, the same id").isEqualTo(a);
        assertThat(HOLDER_IDS.of(B.url())).as("another worker's").isNotEqualTo(a);
        assertThat(HolderIds.random().of(A.url())).as("another resolver's").isNotEqualTo(a);
        byte[] secret = new byte[32];
        assertThat(HolderIds.withSecret(secret).of(A.url())).as("the secret decides")
                .isEqualTo(HolderIds.withSecret(secret.clone()).of(A.url()));
        assertThat(HolderIds.tag(a)).isEqualTo(a.substring(0, 6) + "…");
        assertThat(HOLDER_IDS.toString()).doesNotContain(a);
    }
}
