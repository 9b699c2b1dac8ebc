package dev.rollcall.api;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs a task after a delay, for a resolver's timers (retries, refreshes, spaced snapshot builds):
 * after {@code delay} it hands {@code task} to {@code executor}, on whatever thread it likes. The
 * shape is Caffeine's {@code Scheduler}.
 *
 * <p>For tests: a scheduler that fires when the test advances its {@link Ticker} makes timing rules
 * run in virtual time. Production code has no reason to set one (the resolver schedules on its own
 * thread). Implementations must be thread-safe, must not run {@code task} on the calling thread,
 * and must tolerate cancellation of the returned future at any time, before or after it fired.
 */
@FunctionalInterface
public interface Scheduler {

    /**
     * Hands {@code task} to {@code executor} once {@code delay} has passed.
     *
     * @return a future whose {@link Future#cancel(boolean) cancel(false)} stops a task that has
     *         not been handed over yet
     */
    Future<?> schedule(Executor executor, Runnable task, long delay, TimeUnit unit);

    /** A scheduler on {@code service}'s threads, which it does not own or shut down. */
    static Scheduler forScheduledExecutorService(ScheduledExecutorService service) {
        Objects.requireNonNull(service, "service");
        return (executor, task, delay, unit) -> service.schedule(() -> executor.execute(task), delay, unit);
    }
}
