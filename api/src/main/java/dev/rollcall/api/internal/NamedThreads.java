package dev.rollcall.api.internal;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Daemon threads named {@code prefix-N}, so that a thread dump says whose they are. Internal. */
public final class NamedThreads {

    private NamedThreads() {
    }

    public static ThreadFactory daemon(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
