package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.registry.FleetSnapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** How readers wait for snapshots ({@code WorkerResolver.await*}) and how publishing wakes them. */
class SnapshotFanOutTest {

    private static FleetSnapshot snapshot(long number) {
        return FleetSnapshot.builder(number).publishedAt(Instant.EPOCH).build();
    }

    @Test
    void aSlowAwaitConditionNeverHoldsUpAPublish() throws Exception {
        SnapshotFanOut fanOut = new SnapshotFanOut("test", snapshot(0), Executors.newSingleThreadExecutor(),
                Ticker.systemTicker());
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
            fanOut.publish(snapshot(1));
            assertThat(testing.await(10, TimeUnit.SECONDS)).isTrue();

            // The resolver's thread publishes the next one while the condition is still running on snapshot 1.
            CompletableFuture.runAsync(() -> fanOut.publish(snapshot(2))).get(10, TimeUnit.SECONDS);

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
        SnapshotFanOut fanOut = new SnapshotFanOut("test", snapshot(0), Executors.newSingleThreadExecutor(),
                Ticker.systemTicker());
        CompletableFuture<FleetSnapshot> three = CompletableFuture.supplyAsync(() -> awaitNumber(fanOut, 3));
        CompletableFuture<FleetSnapshot> never = CompletableFuture.supplyAsync(() -> awaitNumber(fanOut, 99));
        for (int n = 1; n <= 5; n++) {
            fanOut.publish(snapshot(n));
        }
        assertThat(three.get(10, TimeUnit.SECONDS).number()).isGreaterThanOrEqualTo(3);
        fanOut.close();
        assertThat(never.get(10, TimeUnit.SECONDS).number()).as("closing returns the last one").isEqualTo(5);
    }

    @Test
    void aListenerGetsTheSnapshotCurrentAtItsRegistrationFirstAndLosesNoneAfter() {
        java.util.ArrayDeque<Runnable> queued = new java.util.ArrayDeque<>();
        ExecutorService listenerThread = new java.util.concurrent.AbstractExecutorService() {
            @Override public void execute(Runnable task) { queued.add(task); }
            @Override public void shutdown() { }
            @Override public java.util.List<Runnable> shutdownNow() { return java.util.List.of(); }
            @Override public boolean isShutdown() { return false; }
            @Override public boolean isTerminated() { return false; }
            @Override public boolean awaitTermination(long timeout, TimeUnit unit) { return true; }
        };
        SnapshotFanOut fanOut = new SnapshotFanOut("test", snapshot(0), listenerThread, Ticker.systemTicker());
        java.util.List<Long> seen = new java.util.ArrayList<>();
        fanOut.addListener(s -> seen.add(s.number()));
        fanOut.publish(snapshot(1)); // before the listener thread got to the registration

        while (!queued.isEmpty()) {
            queued.poll().run();
        }
        fanOut.publish(snapshot(2));
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
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
