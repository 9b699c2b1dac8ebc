package dev.rollcall.api.internal;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * A scheduled executor on one daemon thread with a fixed name: the loop a backend runs its watch,
 * lookups, retries or heartbeats on. Cancelled tasks leave the queue at once. It remembers its
 * thread, so that {@link #awaitEnded} waits for the thread itself to end (the executor reports
 * terminated while its thread is still on its way out) and does not wait when called from the loop
 * (a close from inside a listener call: the loop ends once that call returns). Thread-safe, as
 * any {@link ScheduledThreadPoolExecutor}. Internal.
 */
public final class DaemonLoop extends ScheduledThreadPoolExecutor {

    private final RecordingFactory threads;

    /** A loop whose thread, started with the first task, is a daemon named {@code threadName}. */
    public DaemonLoop(String threadName) {
        this(new RecordingFactory(NamedThreads.daemonNamed(threadName)));
    }

    private DaemonLoop(RecordingFactory threads) {
        super(1, threads);
        this.threads = threads;
        setRemoveOnCancelPolicy(true);
    }

    /**
     * After {@link #shutdown} or {@link #shutdownNow}: waits up to {@code millis} for the executor
     * to terminate, then up to {@code millis} more for its thread to end.
     *
     * @return true once the thread has ended, or when there is nothing to wait for: no task ever
     *         started the thread, or the caller is the loop's own thread; false when it still runs
     *         (a daemon: it does not keep the JVM alive; the caller says so in its log)
     * @throws InterruptedException when the caller is interrupted while waiting
     */
    public boolean awaitEnded(long millis) throws InterruptedException {
        Thread t = threads.last;
        if (t == null || t == Thread.currentThread()) {
            return true;
        }
        if (!awaitTermination(millis, TimeUnit.MILLISECONDS)) {
            return false;
        }
        t.join(millis);
        return !t.isAlive();
    }

    /** Keeps the thread it made last: the loop has one, made for its first task. */
    private static final class RecordingFactory implements ThreadFactory {
        private final ThreadFactory named;
        private volatile Thread last;

        RecordingFactory(ThreadFactory named) {
            this.named = named;
        }

        @Override
        public Thread newThread(Runnable r) {
            Thread t = named.newThread(r);
            last = t;
            return t;
        }
    }
}
