package dev.rollcall.worker;

import dev.rollcall.api.internal.NamedThreads;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one thread of the process that sends what {@link WorkerInfoService}s push (changes and
 * heartbeats), named {@code rollcall-worker-push-N}. Shared, so that a JVM holding many services
 * (a test fleet, a benchmark's 10,000 loopback workers) holds one thread, not one each. It starts
 * on first use; while a {@link RollcallWorker} is open it waits up to ten idle seconds before it
 * ends, and once the last one has closed it ends as soon as it is idle, so that a process whose
 * workers are closed holds none of Rollcall's threads. Sends never block (gRPC queues them), so one
 * thread keeps up.
 */
final class PushThread {

    private static final ScheduledThreadPoolExecutor SHARED = create();
    private static final long HELD_KEEP_ALIVE_MILLIS = 10_000; // a constant: create() reads it during class init
    /** Open workers; guarded by the class. */
    private static int holders;

    private PushThread() {
    }

    static ScheduledThreadPoolExecutor shared() {
        return SHARED;
    }

    /** Workers open now (for tests). */
    static synchronized int holders() {
        return holders;
    }

    /** A worker opened: the thread may idle between its pushes and heartbeats. */
    static synchronized void hold() {
        if (holders++ == 0) {
            SHARED.setKeepAliveTime(HELD_KEEP_ALIVE_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** A worker closed: with none left the thread ends once idle (it starts again on demand). */
    static synchronized void release() {
        if (--holders == 0) {
            SHARED.setKeepAliveTime(1, TimeUnit.MILLISECONDS); // wakes the idle thread, which then ends
        }
    }

    private static ScheduledThreadPoolExecutor create() {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, NamedThreads.daemon("rollcall-worker-push"));
        e.setKeepAliveTime(HELD_KEEP_ALIVE_MILLIS, TimeUnit.MILLISECONDS);
        e.allowCoreThreadTimeOut(true);
        e.setRemoveOnCancelPolicy(true);
        return e;
    }
}
