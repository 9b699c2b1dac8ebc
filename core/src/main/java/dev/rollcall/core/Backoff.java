package dev.rollcall.core;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/** Exponential backoff with ±20 % jitter, so that workers that failed together do not retry together. */
final class Backoff {

    private final long initialNanos;
    private final long maxNanos;

    Backoff(Duration initial, Duration max) {
        this.initialNanos = initial.toNanos();
        this.maxNanos = max.toNanos();
    }

    /** The delay before retry number {@code failures} (1 after the first failure). */
    long delayNanos(int failures) {
        int shift = Math.min(Math.max(failures - 1, 0), 30);
        long base = initialNanos > (maxNanos >> shift) ? maxNanos : Math.min(maxNanos, initialNanos << shift);
        double jitter = 0.8 + 0.4 * ThreadLocalRandom.current().nextDouble();
        return (long) (base * jitter);
    }
}
