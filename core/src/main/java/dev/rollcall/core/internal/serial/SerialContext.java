package dev.rollcall.core.internal.serial;

import dev.rollcall.api.Scheduler;
import dev.rollcall.api.Ticker;
import dev.rollcall.api.internal.BrokenInvariants;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resolver's one writer thread, its clock and its timers: every task runs on {@code executor}
 * one after another, in the order given (the pattern of grpc-java's {@code SynchronizationContext}).
 * Time comes from an injected {@link Ticker} and timers from an injected {@link Scheduler}, so that a
 * test drives both.
 *
 * <p>{@link #execute} and {@link #schedule} may be called from any thread. Once the executor has
 * stopped, late tasks (network callbacks after close) are dropped, logged at TRACE: this is the one
 * place that swallows {@link RejectedExecutionException}.
 */
public final class SerialContext {

    private static final Logger log = LoggerFactory.getLogger(SerialContext.class);

    private final Executor executor;
    private final Scheduler scheduler;
    private final Ticker ticker;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainQueued = new AtomicBoolean();
    /** The thread running a task of this context right now, if any. */
    private volatile Thread running;

    public SerialContext(Executor executor, Scheduler scheduler, Ticker ticker) {
        this.executor = executor;
        this.scheduler = scheduler;
        this.ticker = ticker;
    }

    /**
     * Runs {@code task} on the context, after the tasks already waiting; dropped once it has stopped.
     * Tasks wait in a queue of the context's own and run in batches: the executor gets one drain per
     * batch, not one task per call (converging on 10,000 workers hands the context two tasks per
     * worker from the network threads; one executor hand-off each cost a lock, a timer-queue insert
     * and often a wake-up of the resolver thread).
     */
    public void execute(Runnable task) {
        if (executor instanceof ExecutorService service && service.isShutdown()) {
            log.trace("serial context stopped; dropping a late task");
            return; // a drain queued before the stop may never run: nothing must pile up behind it
        }
        tasks.add(task);
        if (drainQueued.compareAndSet(false, true)) {
            try {
                executor.execute(this::drain);
            } catch (RejectedExecutionException stopped) {
                tasks.clear();
                log.trace("serial context stopped; dropping a late task");
            }
        }
    }

    /** Runs the waiting tasks, in order; a task that throws is logged and the next one runs. */
    private void drain() {
        // Cleared first: a task added from now on queues a drain of its own, so none is left behind.
        drainQueued.set(false);
        running = Thread.currentThread();
        try {
            for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
                try {
                    task.run();
                } catch (RuntimeException | Error e) {
                    if (e instanceof AssertionError broken) {
                        // Assertions are on in tests only; they look there (an invariant broken inside a build
                        // must fail the test that broke it, though the context goes on).
                        BrokenInvariants.record(broken);
                    }
                    log.error("a task of the resolver's serial context failed", e);
                }
            }
        } finally {
            running = null;
        }
    }

    /**
     * Runs {@code task} on the context once {@code delayNanos} have passed on the ticker, unless the
     * returned timer is cancelled first. Cancelling is safe at any time, also after the task ran.
     */
    public Timer schedule(Runnable task, long delayNanos) {
        Timer timer = new Timer();
        try {
            timer.future = scheduler.schedule(this::execute, () -> {
                if (!timer.cancelled) {
                    timer.fired = true;
                    task.run();
                }
            }, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException stopped) {
            timer.cancelled = true;
            log.trace("serial context stopped; dropping a timer");
        }
        return timer;
    }

    /** The ticker's reading, in nanoseconds. */
    public long nanoTime() {
        return ticker.read();
    }

    /** Fails when the caller is not a task of this context: a guard for code that must run on it. */
    void assertOnContext() {
        if (running != Thread.currentThread()) {
            throw new IllegalStateException("not called from the resolver's serial context: "
                    + Thread.currentThread().getName());
        }
    }

    /** A pending task of {@link #schedule}. Cancel it from the context only. */
    public static final class Timer {
        private volatile Future<?> future;
        private boolean cancelled;
        private boolean fired;

        /** Stops the task unless it has run; harmless after it ran or was cancelled. */
        public void cancel() {
            cancelled = true;
            Future<?> f = future;
            if (f != null && !fired) {
                f.cancel(false);
            }
        }

        /** Whether the task has neither run nor been cancelled. */
        public boolean pending() {
            return !cancelled && !fired;
        }
    }
}
