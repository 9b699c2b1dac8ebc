package dev.rollcall.discovery.consul;

import java.util.function.LongSupplier;

/**
 * The token bucket Consul's "Blocking Queries" page asks clients to put on their loop: a query
 * takes a token; the bucket holds at most {@code burst} and gains one per {@code interval}. While
 * the service changes now and then, every change is answered at once (the bucket is full); under
 * sustained churn (a flapping check, a mass restart), where every blocking query returns at once
 * with a new index, the loop degrades to one query per {@code interval} instead of re-querying as
 * fast as the leader answers.
 *
 * <p>Not thread-safe: owned by the watch thread. Time comes from an injected ticker (nanoseconds),
 * so the arithmetic is tested without waiting.
 */
final class QueryRateLimit {

    private final long intervalNanos;      // 0: no limit
    private final int burst;
    private final LongSupplier ticker;
    private double tokens;                 // below 0 when queries are reserved ahead of their time
    private long last;

    QueryRateLimit(long intervalNanos, int burst, LongSupplier ticker) {
        if (intervalNanos < 0 || burst < 1) {
            throw new IllegalArgumentException("interval " + intervalNanos + "ns, burst " + burst);
        }
        this.intervalNanos = intervalNanos;
        this.burst = burst;
        this.ticker = ticker;
        this.tokens = burst;
        this.last = ticker.getAsLong();
    }

    /**
     * Takes a token for the next query and says how long to wait before sending it: 0 while the
     * bucket has a token, else until the next one is due.
     */
    long reserveNanos() {
        if (intervalNanos == 0) {
            return 0;
        }
        long now = ticker.getAsLong();
        tokens = Math.min(burst, tokens + (double) (now - last) / intervalNanos);
        last = now;
        tokens -= 1;
        return tokens >= 0 ? 0 : (long) Math.ceil(-tokens * intervalNanos);
    }
}
