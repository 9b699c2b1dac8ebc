package dev.rollcall.discovery.consul;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/** Exponential backoff with ±20 % jitter, so that watchers that failed together do not retry together. */
final class Backoff {

    private final long initialNanos;
    private final long maxNanos;

    Backoff(Duration initial, Duration max) {
        this.initialNanos = initial.toNanos();
        this.maxNanos = max.toNanos();
    }

    /** The delay before retry number {@code attempt} (1 after the first failure). */
    long delayNanos(int attempt) {
        int shift = Math.min(Math.max(attempt - 1, 0), 30);
        long base = initialNanos > (maxNanos >> shift) ? maxNanos : Math.min(maxNanos, initialNanos << shift);
        double jitter = 0.8 + 0.4 * ThreadLocalRandom.current().nextDouble();
        return (long) (base * jitter);
    }
}
