package dev.rollcall.server.internal.grpc;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds one kind of stream (WatchFleet or HoldFleet), in all and per connection. A place is taken
 * when the call starts and given back once, when it ends however it ends. A refusal says which
 * bound was reached, with its value and its key. Thread-safe.
 */
final class StreamLimit {

    private final String method;
    private final int max;
    private final String maxKey;
    private final int maxPerConnection;
    private final String maxPerConnectionKey;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<Object, Integer> perConnection = new ConcurrentHashMap<>();

    StreamLimit(String method, int max, String maxKey, int maxPerConnection, String maxPerConnectionKey) {
        this.method = method;
        this.max = max;
        this.maxKey = maxKey;
        this.maxPerConnection = maxPerConnection;
        this.maxPerConnectionKey = maxPerConnectionKey;
    }

    /** Takes a place for a stream on {@code connection}; null, or why there is none. */
    String acquire(Object connection) {
        if (total.incrementAndGet() > max) {
            total.decrementAndGet();
            return "this service already serves as many " + method + " streams as it may (" + maxKey + "=" + max
                    + ")";
        }
        boolean[] taken = {false};
        perConnection.compute(connection, (k, n) -> {
            int have = n == null ? 0 : n;
            if (have >= maxPerConnection) {
                return n;
            }
            taken[0] = true;
            return have + 1;
        });
        if (!taken[0]) {
            total.decrementAndGet();
            return "this connection already holds as many " + method + " streams as one connection may ("
                    + maxPerConnectionKey + "=" + maxPerConnection + ")";
        }
        return null;
    }

    /** Gives back the place {@link #acquire} took; call once per place. */
    void release(Object connection) {
        perConnection.computeIfPresent(connection, (k, n) -> n <= 1 ? null : n - 1);
        total.decrementAndGet();
    }

    /** Streams holding a place now. */
    int held() {
        return total.get();
    }
}
