package dev.rollcall.core.internal.serial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.Scheduler;
import dev.rollcall.api.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.Test;

class SerialContextTest {

    private final VirtualTime time = new VirtualTime();
    private final SerialContext context = time.context();
    private final List<String> ran = new ArrayList<>();

    @Test
    void runsTasksInOrderOnTheContext() {
        context.execute(() -> ran.add("a"));
        context.execute(() -> {
            context.assertOnContext();
            ran.add("b");
        });
        assertThat(ran).isEmpty();
        time.runUntilIdle();
        assertThat(ran).containsExactly("a", "b");
    }

    @Test
    void assertOnContextFailsOffTheContext() {
        assertThatThrownBy(context::assertOnContext).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not called from the resolver's serial context");
    }

    @Test
    void aTimerFiresOnTheContextAfterItsDelayOnTheTicker() {
        SerialContext.Timer timer = context.schedule(() -> ran.add("fired"), Duration.ofMillis(10).toNanos());
        time.advance(Duration.ofMillis(9));
        assertThat(ran).isEmpty();
        assertThat(timer.pending()).isTrue();
        time.advance(Duration.ofMillis(1));
        assertThat(ran).containsExactly("fired");
        assertThat(timer.pending()).isFalse();
    }

    @Test
    void cancellingATimerBeforeItFiresStopsIt_andAfterwardsIsHarmless() {
        SerialContext.Timer cancelled = context.schedule(() -> ran.add("cancelled"), 10);
        cancelled.cancel();
        SerialContext.Timer fired = context.schedule(() -> ran.add("fired"), 10);
        time.advance(Duration.ofMillis(1));
        fired.cancel();
        fired.cancel();
        assertThat(ran).containsExactly("fired");
    }

    @Test
    void aTimerThatFiredButWaitsBehindOtherTasksCanStillBeCancelled() {
        // A scheduler that hands the task over at once: it waits on the context, not yet run.
        SerialContext handedOver = new SerialContext(time.executor(), (executor, task, delay, unit) -> {
            executor.execute(task);
            return CompletableFuture.completedFuture(null);
        }, time);
        SerialContext.Timer timer = handedOver.schedule(() -> ran.add("timer"), 0);
        timer.cancel();
        time.runUntilIdle();
        assertThat(ran).isEmpty();
    }

    @Test
    void tasksAndTimersAfterTheExecutorStoppedAreDropped() {
        ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor();
        SerialContext real = new SerialContext(thread, Scheduler.forScheduledExecutorService(thread),
                Ticker.systemTicker());
        thread.shutdownNow();
        real.execute(() -> ran.add("late"));
        assertThat(real.schedule(() -> ran.add("late timer"), 0).pending()).isFalse();
        assertThat(ran).isEmpty();
    }
}
