package dev.rollcall.discovery.etcd;

import java.time.Duration;

/**
 * The failures of one loop since its last success, and the delay they earn under Rollcall's
 * {@link dev.rollcall.api.Backoff} (doubling from {@code initial} to {@code max}, up to 20 %
 * shorter at random). Not thread-safe: each loop owns one.
 */
final class Backoff {

    private final dev.rollcall.api.Backoff delays;
    private int failures;

    Backoff(Duration initial, Duration max) {
        this.delays = dev.rollcall.api.Backoff.of(initial, max);
    }

    /** Records a failure and returns how long to wait before the next attempt. */
    Duration next() {
        failures++;
        return delays.delay(failures);
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
