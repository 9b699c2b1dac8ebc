package dev.rollcall.cli;

import dev.rollcall.core.WorkerResolver;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The demo's steady load during a rolling upgrade: a small job every 20 ms, each on a freshly pinned
 * snapshot, counting the ones that failed. One thread, {@code rollcall-demo-jobs}; one job at a time.
 */
final class BackgroundJobs {

    private static final long ROWS = 30_000;

    /** How many jobs ran and failed, and the first failure. */
    record Tally(int ran, int failed, String firstFailure) {
    }

    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rollcall-demo-jobs");
        t.setDaemon(true);
        return t;
    });
    private final AtomicInteger ran = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();

    BackgroundJobs(WorkerResolver resolver, SquaresJob job) {
        thread.scheduleWithFixedDelay(() -> {
            try {
                SquaresJob.Result r = job.run(resolver.pin(), ROWS);
                if (r.sum() != SquaresJob.expectedSum(ROWS)) {
                    throw new IllegalStateException("wrong sum " + r.sum());
                }
                ran.incrementAndGet();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                ran.incrementAndGet();
                failed.incrementAndGet();
                firstFailure.compareAndSet(null, e.getMessage());
            }
        }, 0, 20, TimeUnit.MILLISECONDS);
    }

    /** Stops after the job running now, and says how they went. */
    Tally stop() throws InterruptedException {
        thread.shutdown();
        if (!thread.awaitTermination(30, TimeUnit.SECONDS)) {
            thread.shutdownNow();
        }
        return new Tally(ran.get(), failed.get(), firstFailure.get());
    }
}
