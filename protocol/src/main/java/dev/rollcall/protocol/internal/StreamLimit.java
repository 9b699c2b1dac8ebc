package dev.rollcall.protocol.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bounds one kind of stream (a worker's WatchWorkerInfo, the fleet server's WatchFleet or
 * HoldFleet), in all and per connection. A place is taken when the call starts and given back once,
 * when it ends however it ends. A refusal says which bound was reached, with its value and its key;
 * its owner logs refusals at most once a minute, with how many there were since
 * ({@link #countRefusal()}: a flood must not flood the log too). Thread-safe.
 */
public final class StreamLimit {

    private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final String owner;
    private final String method;
    private final int max;
    private final String maxKey;
    private final int maxPerConnection;
    private final String maxPerConnectionKey;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<Object, Integer> perConnection = new ConcurrentHashMap<>();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong lastLog = new AtomicLong(System.nanoTime() - LOG_EVERY_NANOS);

    /**
     * @param owner  who refuses, for the refusal's text: {@code "this worker"}, {@code "this service"}
     * @param method the streams' method, e.g. {@code WatchFleet}
     */
    public StreamLimit(String owner, String method, int max, String maxKey, int maxPerConnection,
                       String maxPerConnectionKey) {
        this.owner = owner;
        this.method = method;
        this.max = max;
        this.maxKey = maxKey;
        this.maxPerConnection = maxPerConnection;
        this.maxPerConnectionKey = maxPerConnectionKey;
    }

    /** Takes a place for a stream on {@code connection}; null, or why there is none. */
    public String acquire(Object connection) {
        if (total.incrementAndGet() > max) {
            total.decrementAndGet();
            return owner + " already serves as many " + method + " streams as it may (" + maxKey + "=" + max
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
    public void release(Object connection) {
        perConnection.computeIfPresent(connection, (k, n) -> n <= 1 ? null : n - 1);
        total.decrementAndGet();
    }

    /**
     * Counts one refusal; returns how many there were since the last line the caller logged when a
     * line is due (a flood: at most one a minute), else 0.
     */
    public long countRefusal() {
        long count = refused.incrementAndGet();
        long last = lastLog.get();
        long now = System.nanoTime();
        if (now - last >= LOG_EVERY_NANOS && lastLog.compareAndSet(last, now)) {
            refused.addAndGet(-count);
            return count;
        }
        return 0;
    }

    /** Streams holding a place now. */
    public int held() {
        return total.get();
    }
}
