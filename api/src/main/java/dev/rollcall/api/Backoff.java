package dev.rollcall.api;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff with jitter, for retries against a worker or a discovery backend: the delay
 * before retry {@code n} is {@code initial × 2^(n-1)}, capped at {@code max}, then shortened by a
 * random 0–20 % so that clients that failed together do not retry together. No delay exceeds
 * {@code max}. Immutable and thread-safe; the caller counts its failures.
 */
public final class Backoff {

    private final Duration initial;
    private final Duration max;
    private final long initialNanos;
    private final long maxNanos;

    private Backoff(Duration initial, Duration max) {
        this.initial = initial;
        this.max = max;
        this.initialNanos = initial.toNanos();
        this.maxNanos = max.toNanos();
    }

    /**
     * @throws IllegalArgumentException when {@code initial} is not positive or {@code max} is below it
     */
    public static Backoff of(Duration initial, Duration max) {
        Objects.requireNonNull(initial, "initial");
        Objects.requireNonNull(max, "max");
        if (initial.isZero() || initial.isNegative()) {
            throw new IllegalArgumentException("initial backoff " + initial + " is not positive");
        }
        if (max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("max backoff " + max + " is below the initial " + initial);
        }
        return new Backoff(initial, max);
    }

    /** The delay before retry number {@code failures} (1 after the first failure), in nanoseconds. */
    public long delayNanos(int failures) {
        return delayNanos(failures, ThreadLocalRandom.current());
    }

    /**
     * The delay before retry number {@code failures}, in nanoseconds, with the jitter drawn from
     * {@code jitter}: a caller that injects its randomness (a test's seeded or fixed generator) gets
     * repeatable delays.
     */
    public long delayNanos(int failures, RandomGenerator jitter) {
        int shift = Math.min(Math.max(failures - 1, 0), 62);
        long base = initialNanos > (maxNanos >> shift) ? maxNanos : Math.min(maxNanos, initialNanos << shift);
        return (long) (base * (0.8 + 0.2 * jitter.nextDouble()));
    }

    /** The delay before retry number {@code failures} (1 after the first failure). */
    public Duration delay(int failures) {
        return Duration.ofNanos(delayNanos(failures));
    }

    public Duration initial() {
        return initial;
    }

    public Duration max() {
        return max;
    }

    @Override
    public String toString() {
        return "backoff " + initial + " doubling to " + max;
    }
}
