package dev.rollcall.api.internal;

import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Rollcall's thread factories: daemon threads (they never keep a JVM alive) with names that say
 * whose they are in a thread dump. The factories are thread-safe. Internal.
 */
public final class NamedThreads {

    private NamedThreads() {
    }

    /** Daemon threads named {@code prefix-1}, {@code prefix-2}, ...: for a pool. */
    public static ThreadFactory daemon(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        AtomicInteger count = new AtomicInteger();
        return r -> newDaemon(r, prefix + "-" + count.incrementAndGet());
    }

    /**
     * Daemon threads all named exactly {@code name}: for one thread (a backend's loop), whose name
     * its documentation and tests quote.
     */
    public static ThreadFactory daemonNamed(String name) {
        Objects.requireNonNull(name, "name");
        return r -> newDaemon(r, name);
    }

    private static Thread newDaemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
