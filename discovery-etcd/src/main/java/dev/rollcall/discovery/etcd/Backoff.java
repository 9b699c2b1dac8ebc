package dev.rollcall.discovery.etcd;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff (doubling from {@code initial} up to {@code max}) with up to 20 % jitter
 * downwards, so that clients that lost etcd together do not all come back in the same instant, and
 * no delay ever exceeds {@code max}. Not thread-safe: each loop owns one.
 */
final class Backoff {

    private final long initialNanos;
    private final long maxNanos;
    private int failures;

    Backoff(Duration initial, Duration max) {
        this.initialNanos = initial.toNanos();
        this.maxNanos = max.toNanos();
    }

    /** Records a failure and returns how long to wait before the next attempt. */
    Duration next() {
        int shift = Math.min(failures, 30);
        failures++;
        long base = initialNanos > (maxNanos >> shift) ? maxNanos : Math.min(maxNanos, initialNanos << shift);
        double jitter = 0.8 + 0.2 * ThreadLocalRandom.current().nextDouble();
        return Duration.ofNanos((long) (base * jitter));
    }

    /** After a success: the next failure waits {@code initial} again. */
    void reset() {
        failures = 0;
    }

    /** Failures since the last success. */
    int failures() {
        return failures;
    }
}
