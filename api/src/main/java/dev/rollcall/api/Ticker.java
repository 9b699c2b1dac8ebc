package dev.rollcall.api;

/**
 * A source of nanosecond time for everything a resolver times: probe retries and their backoff,
 * flap damping, refreshes, publish spacing and the deadlines of its {@code await} methods. Only
 * differences between two readings mean anything (as with {@link System#nanoTime()}).
 *
 * <p>For tests: hand a resolver a ticker you advance yourself, together with a matching
 * {@link Scheduler}, and timing rules run in virtual time (as Caffeine's {@code Ticker} does).
 * Production code has no reason to set one. Implementations must be thread-safe and must not block.
 */
@FunctionalInterface
public interface Ticker {

    /** The current reading, in nanoseconds. */
    long read();

    /** {@link System#nanoTime()}: the default. */
    static Ticker systemTicker() {
        return System::nanoTime;
    }
}
