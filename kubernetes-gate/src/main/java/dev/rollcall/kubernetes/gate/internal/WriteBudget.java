package dev.rollcall.kubernetes.gate.internal;

import java.util.function.LongSupplier;

/**
 * A token bucket for the gate's patches: {@code perSecond} tokens a second, at most one second's worth
 * saved (the burst), so that any one-second window sees at most twice {@code perSecond} patches and a
 * long run at most {@code perSecond} a second. Not thread-safe: the writer's lock guards it.
 */
final class WriteBudget {

    private static final long SECOND = 1_000_000_000L;

    private final int perSecond;
    private final LongSupplier nanoTime;
    private double tokens;
    private long refilledAt;

    WriteBudget(int perSecond, LongSupplier nanoTime) {
        if (perSecond < 1) {
            throw new IllegalArgumentException("perSecond " + perSecond + " is below 1");
        }
        this.perSecond = perSecond;
        this.nanoTime = nanoTime;
        this.tokens = perSecond;
        this.refilledAt = nanoTime.getAsLong();
    }

    /** Nanoseconds until a token is there: 0 when one is there now. */
    long nanosUntilToken() {
        refill();
        return tokens >= 1 ? 0 : (long) Math.ceil((1 - tokens) * SECOND / perSecond);
    }

    /** Takes the token {@link #nanosUntilToken()} said was there. */
    void take() {
        refill();
        tokens -= 1;
    }

    private void refill() {
        long now = nanoTime.getAsLong();
        tokens = Math.min(perSecond, tokens + (double) (now - refilledAt) * perSecond / SECOND);
        refilledAt = now;
    }
}
