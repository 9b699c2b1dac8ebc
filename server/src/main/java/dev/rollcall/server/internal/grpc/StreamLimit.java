package dev.rollcall.server.internal.grpc;

import java.net.SocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounds one kind of stream (WatchFleet or HoldFleet), in all and per connection. A place is taken
 * when the call starts and given back once, when it ends however it ends. A refusal says which
 * bound was reached, with its value and its key; refusals are logged at WARN at most once a minute,
 * with how many there were since (a flood must not flood the log too). Thread-safe.
 */
final class StreamLimit {

    private static final Logger log = LoggerFactory.getLogger(StreamLimit.class);
    private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final String method;
    private final int max;
    private final String maxKey;
    private final int maxPerConnection;
    private final String maxPerConnectionKey;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<Object, Integer> perConnection = new ConcurrentHashMap<>();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong lastLog = new AtomicLong(System.nanoTime() - LOG_EVERY_NANOS);

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

    /** Logs {@code refusal} (a flood: once a minute, counted) of a stream from {@code remote} (or null). */
    void noteRefusal(String refusal, SocketAddress remote) {
        long count = refused.incrementAndGet();
        long last = lastLog.get();
        long now = System.nanoTime();
        if (now - last >= LOG_EVERY_NANOS && lastLog.compareAndSet(last, now)) {
            refused.addAndGet(-count);
            log.warn("refused {} {} stream{} since the last such line; the latest from {}: {}", count, method,
                    count == 1 ? "" : "s", remote, refusal);
        }
    }

    /** Streams holding a place now. */
    int held() {
        return total.get();
    }
}
