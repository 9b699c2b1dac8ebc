package dev.rollcall.core.internal.serial;

import dev.rollcall.api.Scheduler;
import dev.rollcall.api.Ticker;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.PriorityQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

/**
 * Virtual time for unit tests of the resolver's timing rules: a {@link Ticker} that moves only when
 * the test says, a {@link Scheduler} that fires as it moves, and a serial executor whose tasks run
 * when the test drains it. Single-threaded: everything runs on the test's thread.
 */
public final class VirtualTime implements Ticker, Scheduler {

    private record Due(long at, long seq, Executor executor, FutureTask<?> task) {
    }

    private final ArrayDeque<Runnable> serial = new ArrayDeque<>();
    private final PriorityQueue<Due> timers = new PriorityQueue<>((a, b) ->
            a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private long now = 1_000_000_000L;
    private long seq;

    /** The serial executor: tasks wait until {@link #runUntilIdle()} or {@link #advance}. */
    Executor executor() {
        return serial::add;
    }

    public SerialContext context() {
        return new SerialContext(executor(), this, this);
    }

    @Override
    public long read() {
        return now;
    }

    @Override
    public Future<?> schedule(Executor executor, Runnable task, long delay, TimeUnit unit) {
        FutureTask<?> f = new FutureTask<>(task, null);
        timers.add(new Due(now + unit.toNanos(delay), seq++, executor, f));
        return f;
    }

    /** Runs every waiting serial task, including those they add. */
    public void runUntilIdle() {
        Runnable r;
        while ((r = serial.poll()) != null) {
            r.run();
        }
    }

    /** Moves time forward by {@code d}, firing each timer at its time and running what it queues. */
    public void advance(Duration d) {
        long until = now + d.toNanos();
        runUntilIdle();
        while (!timers.isEmpty() && timers.peek().at <= until) {
            Due due = timers.poll();
            now = Math.max(now, due.at);
            if (!due.task.isCancelled()) {
                due.executor.execute(due.task);
            }
            runUntilIdle();
        }
        now = until;
    }

    /**
     * A stall of the process: time moves forward by {@code d} and nothing runs meanwhile, as in a GC
     * pause; timers that fell due run at the next {@link #advance}, late.
     */
    public void stall(Duration d) {
        now += d.toNanos();
    }

    /** Serial tasks waiting to run. */
    public int queuedTasks() {
        return serial.size();
    }

    /** Timers not yet fired or cancelled. */
    public long pendingTimers() {
        return timers.stream().filter(d -> !d.task.isCancelled()).count();
    }
}
