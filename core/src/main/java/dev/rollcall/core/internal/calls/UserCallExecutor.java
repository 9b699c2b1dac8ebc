package dev.rollcall.core.internal.calls;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The executor of the user's calls on shared channels ({@link SharedChannel}), as an ordinary
 * channel's default executor is: a cached pool of daemon threads named {@code prefix-N}, idle ones
 * ending after 30 s. Probe channels run callbacks on their event loop (direct executor), which is
 * right for the resolver's small answers and wrong for a user's Flight stream: its messages (1 MiB
 * record batches, copied into Arrow buffers as they are parsed) would be parsed there too, ahead of
 * other workers' probe answers. {@link #close()} returns once every thread has ended. Thread-safe.
 */
final class UserCallExecutor implements Executor, AutoCloseable {

    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final ThreadPoolExecutor pool;

    UserCallExecutor(String prefix) {
        AtomicInteger count = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(() -> {
                try {
                    r.run();
                } finally {
                    threads.remove(Thread.currentThread());
                }
            }, prefix + "-" + count.incrementAndGet());
            t.setDaemon(true);
            threads.add(t);
            return t;
        });
    }

    @Override
    public void execute(Runnable command) {
        pool.execute(command);
    }

    /** Lets the tasks queued finish, takes no more, and waits (up to 5 s) until every thread has ended. */
    @Override
    public void close() {
        pool.shutdown();
        long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        try {
            pool.awaitTermination(CLOSE_WAIT_NANOS, TimeUnit.NANOSECONDS);
            for (Thread t : threads) { // a terminated pool's last threads may still be on their way out
                long left = deadline - System.nanoTime();
                if (left > 0) {
                    t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
