package dev.rollcall.testkit;

import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * What a test opened, closed last-first when the test ends: hold it in a field annotated with
 * JUnit's {@code @AutoClose} and pass each resolver, worker or fleet through {@link #add}.
 *
 * <p>Thread-safe. {@link #close()} closes everything even when some fail, then throws the first
 * failure with the others suppressed.
 */
public final class Closer implements AutoCloseable {

    private final Deque<AutoCloseable> open = new ConcurrentLinkedDeque<>();

    /** Remembers {@code resource} for {@link #close()} and returns it. */
    public <T extends AutoCloseable> T add(T resource) {
        open.push(resource);
        return resource;
    }

    @Override
    public void close() throws Exception {
        Exception first = null;
        for (AutoCloseable c = open.poll(); c != null; c = open.poll()) {
            try {
                c.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
