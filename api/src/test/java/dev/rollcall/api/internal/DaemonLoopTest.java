package dev.rollcall.api.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class DaemonLoopTest {

    private static final long GENEROUS_MILLIS = 30_000;

    @Test
    void runsEveryTaskOnOneDaemonThreadNamedAsGiven() throws Exception {
        DaemonLoop loop = new DaemonLoop("rollcall-test-loop");
        try {
            Thread first = loop.submit(Thread::currentThread).get();
            Thread later = loop.schedule(Thread::currentThread, 1, TimeUnit.MILLISECONDS).get();

            assertThat(first.getName()).isEqualTo("rollcall-test-loop");
            assertThat(first.isDaemon()).isTrue();
            assertThat(later).isSameAs(first);
        } finally {
            loop.shutdownNow();
        }
    }

    @Test
    void aCancelledTaskLeavesTheQueueAtOnce() {
        DaemonLoop loop = new DaemonLoop("rollcall-test-loop");
        try {
            ScheduledFuture<?> retry = loop.schedule(() -> { }, 1, TimeUnit.HOURS);
            retry.cancel(false);

            assertThat(loop.getQueue()).isEmpty();
        } finally {
            loop.shutdownNow();
        }
    }

    @Test
    void awaitEndedReturnsOnlyOnceTheThreadItselfHasEnded() throws Exception {
        DaemonLoop loop = new DaemonLoop("rollcall-test-loop");
        Thread thread = loop.submit(Thread::currentThread).get();

        loop.shutdownNow();

        assertThat(loop.awaitEnded(GENEROUS_MILLIS)).isTrue();
        assertThat(thread.isAlive()).isFalse();
    }

    @Test
    void aThreadThatDoesNotStopIsReportedAndWaitedForAgainLater() throws Exception {
        DaemonLoop loop = new DaemonLoop("rollcall-test-loop");
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean released = new AtomicBoolean();
        loop.execute(() -> {
            running.countDown();
            while (!released.get()) {   // a step that ignores the interrupt, as a stuck client call would
                try {
                    release.await();
                } catch (InterruptedException e) {
                    // ignored on purpose
                }
            }
        });
        running.await();
        loop.shutdownNow();

        assertThat(loop.awaitEnded(1)).isFalse();

        released.set(true);
        release.countDown();
        assertThat(loop.awaitEnded(GENEROUS_MILLIS)).isTrue();
    }

    @Test
    void stoppingFromTheLoopItselfDoesNotWaitForItself() throws Exception {
        DaemonLoop loop = new DaemonLoop("rollcall-test-loop");

        // A backend closed from inside a listener call, which runs on the loop.
        boolean ended = loop.submit(() -> {
            loop.shutdownNow();
            return loop.awaitEnded(GENEROUS_MILLIS);
        }).get();

        assertThat(ended).isTrue();
        assertThat(loop.awaitEnded(GENEROUS_MILLIS)).isTrue();
    }

    @Test
    void aLoopThatNeverRanATaskHasNothingToWaitFor() throws Exception {
        DaemonLoop loop = new DaemonLoop("rollcall-test-loop");

        loop.shutdown();

        assertThat(loop.awaitEnded(GENEROUS_MILLIS)).isTrue();
    }
}
