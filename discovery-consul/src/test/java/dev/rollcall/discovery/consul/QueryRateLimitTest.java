package dev.rollcall.discovery.consul;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The token bucket in virtual time: burst 2, then one query per interval, full again after a quiet spell. */
class QueryRateLimitTest {

    private static final long INTERVAL = TimeUnit.SECONDS.toNanos(15);
    private final AtomicLong now = new AtomicLong(1_000);

    @Test
    void letsABurstGoAtOnceThenOneQueryPerInterval() {
        QueryRateLimit limit = new QueryRateLimit(INTERVAL, 2, now::get);

        assertThat(limit.reserveNanos()).isZero();
        assertThat(limit.reserveNanos()).isZero();
        assertThat(limit.reserveNanos()).as("the third at once waits one interval").isEqualTo(INTERVAL);
        now.addAndGet(INTERVAL);                 // the caller waited
        assertThat(limit.reserveNanos()).as("still churning: one more interval").isEqualTo(INTERVAL);
        now.addAndGet(INTERVAL / 3);
        assertThat(limit.reserveNanos()).as("reservations queue up").isEqualTo(INTERVAL + 2 * INTERVAL / 3);
    }

    @Test
    void aQuietSpellRefillsTheBucketToItsBurstOnly() {
        QueryRateLimit limit = new QueryRateLimit(INTERVAL, 2, now::get);
        limit.reserveNanos();
        limit.reserveNanos();

        now.addAndGet(10 * INTERVAL);            // a long blocking query with no change

        assertThat(limit.reserveNanos()).isZero();
        assertThat(limit.reserveNanos()).isZero();
        assertThat(limit.reserveNanos()).as("never more than the burst saved up").isPositive();
    }

    @Test
    void aZeroIntervalMeansNoLimit() {
        QueryRateLimit limit = new QueryRateLimit(0, 1, now::get);
        for (int i = 0; i < 100; i++) {
            assertThat(limit.reserveNanos()).isZero();
        }
    }
}
