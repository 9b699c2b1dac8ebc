package dev.rollcall.core.worker;

import dev.rollcall.core.internal.NamedThreads;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one thread of the process that sends what {@link WorkerInfoService}s push (changes and
 * heartbeats), named {@code rollcall-worker-push-N}. Shared, so that a JVM holding many services
 * (a test fleet, a benchmark's 10,000 loopback workers) holds one thread, not one each; it starts
 * on first use and ends after ten idle seconds, so nothing needs closing. Sends never block (gRPC
 * queues them), so one thread keeps up.
 */
final class PushThread {

    private static final ScheduledThreadPoolExecutor SHARED = create();

    private PushThread() {
    }

    static ScheduledThreadPoolExecutor shared() {
        return SHARED;
    }

    private static ScheduledThreadPoolExecutor create() {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, NamedThreads.daemon("rollcall-worker-push"));
        e.setKeepAliveTime(10, TimeUnit.SECONDS);
        e.allowCoreThreadTimeOut(true);
        e.setRemoveOnCancelPolicy(true);
        return e;
    }
}
