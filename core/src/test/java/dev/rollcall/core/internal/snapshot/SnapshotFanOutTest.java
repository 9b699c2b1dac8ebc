package dev.rollcall.core.internal.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.Ticker;
import dev.rollcall.api.internal.NamedThreads;
import dev.rollcall.api.registry.FleetSnapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** How readers wait for snapshots ({@code WorkerResolver.await*}) and how publishing wakes them. */
class SnapshotFanOutTest {

    private static FleetSnapshot snapshot(long number) {
        return FleetSnapshot.builder(number).publishedAt(Instant.EPOCH).build();
    }

    /** A fan-out on real threads, as the resolver builds it. */
    private static SnapshotFanOut fanOut() {
        ThreadFactory threads = NamedThreads.daemon("test-listeners");
        return new SnapshotFanOut("test", snapshot(0), () -> Executors.newSingleThreadExecutor(threads),
                Executors.newSingleThreadExecutor(NamedThreads.daemon("test-followers")),
                Ticker.systemTicker());
    }

    /**
     * Exact drain's lease table moves to each snapshot in a hook: a reader, an awaiter or a lease
     * taken after the snapshot is readable must find the table there already.
     */
    @Test
    void aHookHasEachSnapshotBeforeAnyReaderOrAwaiterCanSeeIt() throws Exception {
        SnapshotFanOut fanOut = fanOut();
        List<Long> currentWhileHooked = new CopyOnWriteArrayList<>();
        List<Long> hooked = new CopyOnWriteArrayList<>();
        fanOut.beforeEachPublish(s -> {
            currentWhileHooked.add(fanOut.current().number());
            hooked.add(s.number());
        });
        try {
            CompletableFuture<List<Long>> hookedWhenAwaited = CompletableFuture.supplyAsync(() -> {
                awaitNumber(fanOut, 1);
                return List.copyOf(hooked);
            });
            fanOut.publish(snapshot(1), false);
            assertThat(fanOut.candidatesKnown()).as("published before candidates were known").isFalse();
            fanOut.publish(snapshot(2), true);

            assertThat(currentWhileHooked).as("the snapshot current while each hook ran: the one before it")
                    .containsExactly(0L, 1L);
            assertThat(hookedWhenAwaited.get(30, TimeUnit.SECONDS)).as("hooked by the time an awaiter saw it")
                    .contains(1L);
            assertThat(fanOut.current().number()).isEqualTo(2);
            assertThat(fanOut.candidatesKnown()).as("known as of snapshot 2").isTrue();
        } finally {
            fanOut.close();
        }
    }

    @Test
    void aListenerThatBlocksDelaysOnlyItselfAndFindsTheNewestSnapshotWhenItReturns() throws Exception {
        SnapshotFanOut fanOut = fanOut();
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<Long> slow = new CopyOnWriteArrayList<>();
        List<Long> other = new CopyOnWriteArrayList<>();
        List<Long> follower = new CopyOnWriteArrayList<>();
        try {
            fanOut.addListener(s -> {
                slow.add(s.number());
                if (s.number() == 1) {
                    blocked.countDown();
                    await(release, 30); // a replan that takes 30 s; released at the end of the test
                }
            }, "test");
            fanOut.addListener(s -> other.add(s.number()), "test");
            fanOut.addFollower(s -> follower.add(s.number())); // a rollcall: name resolver
            fanOut.publish(snapshot(1), true);
            assertThat(blocked.await(10, TimeUnit.SECONDS)).isTrue();
            // Taken before the next one comes: a listener busy with the previous one would find only
            // the newer one waiting (latest wins), and "every snapshot" would not hold.
            Awaitility.await().atMost(Duration.ofSeconds(5))
                    .until(() -> other.contains(1L) && follower.contains(1L));

            for (long n = 2; n <= 50; n++) {
                fanOut.publish(snapshot(n), true);
                long expected = n;
                // Each one arrives while the slow listener is still blocked on snapshot 1.
                Awaitility.await().atMost(Duration.ofSeconds(5))
                        .until(() -> other.contains(expected) && follower.contains(expected));
            }
            assertThat(other).containsExactlyElementsOf(LongStream.rangeClosed(0, 50).boxed().toList());
            assertThat(follower).containsExactlyElementsOf(LongStream.rangeClosed(0, 50).boxed().toList());
            assertThat(slow).containsExactly(0L, 1L);

            release.countDown();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> slow.contains(50L));
            assertThat(slow).as("49 snapshots came while it was blocked: only the newest waited for it")
                    .containsExactly(0L, 1L, 50L);
        } finally {
            release.countDown();
            fanOut.close();
        }
    }

    @Test
    void aFollowerNeverWaitsBehindAUserListener() throws Exception {
        SnapshotFanOut fanOut = fanOut();
        CountDownLatch release = new CountDownLatch(1);
        List<Long> follower = new CopyOnWriteArrayList<>();
        try {
            fanOut.addListener(s -> await(release, 30), "test"); // blocks from its very first snapshot on
            fanOut.addEventListener(e -> await(release, 30), "test");
            fanOut.addFollower(s -> follower.add(s.number()));
            fanOut.publish(snapshot(1), true);
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> follower.contains(1L));
            assertThat(follower).containsExactly(0L, 1L);
        } finally {
            release.countDown();
            fanOut.close();
        }
    }

    @Test
    void aRemovedListenerGetsNothingMoreAndItsThreadEnds() throws Exception {
        SnapshotFanOut fanOut = fanOut();
        List<Long> seen = new CopyOnWriteArrayList<>();
        List<Thread> thread = new CopyOnWriteArrayList<>();
        try {
            Subscription registration = fanOut.addListener(s -> {
                seen.add(s.number());
                thread.add(Thread.currentThread());
            }, "test");
            fanOut.publish(snapshot(1), true);
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> seen.contains(1L));
            registration.close();
            fanOut.publish(snapshot(2), true);
            thread.get(0).join(5_000);
            assertThat(thread.get(0).isAlive()).isFalse();
            assertThat(seen).containsExactly(0L, 1L);
        } finally {
            fanOut.close();
        }
    }

    @Test
    void aSlowAwaitConditionNeverHoldsUpAPublish() throws Exception {
        SnapshotFanOut fanOut = fanOut();
        CountDownLatch testing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        try {
            CompletableFuture<FleetSnapshot> awaited = CompletableFuture.supplyAsync(() -> {
                try {
                    return fanOut.awaitUntil(Duration.ofMinutes(1), s -> {
                        if (s.number() == 1) {
                            testing.countDown();
                            await(release); // a slow condition, e.g. one that looks at every worker
                        }
                        return s.number() == 2;
                    });
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, waiter);
            fanOut.publish(snapshot(1), true);
            assertThat(testing.await(10, TimeUnit.SECONDS)).isTrue();

            // The resolver's thread publishes the next one while the condition is still running on snapshot 1.
            CompletableFuture.runAsync(() -> fanOut.publish(snapshot(2), true)).get(10, TimeUnit.SECONDS);

            release.countDown();
            assertThat(awaited.get(10, TimeUnit.SECONDS).number()).as("the newer snapshot is tested too").isEqualTo(2);
        } finally {
            release.countDown();
            waiter.shutdownNow();
            fanOut.close();
        }
    }

    @Test
    void aWaiterWakesForTheSnapshotThatSatisfiesItAndOnClose() throws Exception {
        SnapshotFanOut fanOut = fanOut();
        CompletableFuture<FleetSnapshot> three = CompletableFuture.supplyAsync(() -> awaitNumber(fanOut, 3));
        CompletableFuture<FleetSnapshot> never = CompletableFuture.supplyAsync(() -> awaitNumber(fanOut, 99));
        for (int n = 1; n <= 5; n++) {
            fanOut.publish(snapshot(n), true);
        }
        assertThat(three.get(10, TimeUnit.SECONDS).number()).isGreaterThanOrEqualTo(3);
        fanOut.close();
        assertThat(never.get(10, TimeUnit.SECONDS).number()).as("closing returns the last one").isEqualTo(5);
    }

    @Test
    void aListenerGetsTheSnapshotCurrentAtItsRegistrationFirstAndLosesNoneAfter() {
        ArrayDeque<Runnable> queued = new ArrayDeque<>();
        ExecutorService listenerThread = new AbstractExecutorService() {
            @Override public void execute(Runnable task) { queued.add(task); }
            @Override public void shutdown() { }
            @Override public List<Runnable> shutdownNow() { return List.of(); }
            @Override public boolean isShutdown() { return false; }
            @Override public boolean isTerminated() { return false; }
            @Override public boolean awaitTermination(long timeout, TimeUnit unit) { return true; }
        };
        SnapshotFanOut fanOut = new SnapshotFanOut("test", snapshot(0), () -> listenerThread, listenerThread,
                Ticker.systemTicker());
        List<Long> seen = new ArrayList<>();
        fanOut.addListener(s -> seen.add(s.number()), "test");
        fanOut.publish(snapshot(1), true); // before the listener thread got to the registration

        while (!queued.isEmpty()) {
            queued.poll().run();
        }
        fanOut.publish(snapshot(2), true);
        while (!queued.isEmpty()) {
            queued.poll().run();
        }
        assertThat(seen).containsExactly(0L, 1L, 2L);
    }

    private static FleetSnapshot awaitNumber(SnapshotFanOut fanOut, long number) {
        try {
            return fanOut.awaitUntil(Duration.ofMinutes(1), s -> s.number() >= number);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void await(CountDownLatch latch) {
        await(latch, 30);
    }

    private static void await(CountDownLatch latch, int seconds) {
        try {
            latch.await(seconds, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
