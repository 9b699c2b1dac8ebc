package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

    private final Backoff backoff = Backoff.of(Duration.ofMillis(100), Duration.ofSeconds(1));

    @Test
    void doublesFromInitialAndNeverExceedsMax() {
        for (int i = 0; i < 1000; i++) {
            assertThat(backoff.delay(1)).isBetween(Duration.ofMillis(80), Duration.ofMillis(100));
            assertThat(backoff.delay(2)).isBetween(Duration.ofMillis(160), Duration.ofMillis(200));
            assertThat(backoff.delay(4)).isBetween(Duration.ofMillis(640), Duration.ofMillis(800));
            assertThat(backoff.delay(5)).isBetween(Duration.ofMillis(800), Duration.ofSeconds(1));
            assertThat(backoff.delay(Integer.MAX_VALUE)).isBetween(Duration.ofMillis(800), Duration.ofSeconds(1));
        }
    }

    @Test
    void jitterSpreadsRetriesThatFailedTogether() {
        long distinct = java.util.stream.IntStream.range(0, 100).mapToLong(i -> backoff.delayNanos(3)).distinct().count();
        assertThat(distinct).isGreaterThan(50);
    }

    @Test
    void rejectsBoundsThatMakeNoSense() {
        assertThatThrownBy(() -> Backoff.of(Duration.ZERO, Duration.ofSeconds(1)))
                .hasMessage("initial backoff PT0S is not positive");
        assertThatThrownBy(() -> Backoff.of(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .hasMessage("max backoff PT1S is below the initial PT2S");
    }

    @Test
    void initialMayEqualMaxAndSaysWhatItIs() {
        Backoff flat = Backoff.of(Duration.ofSeconds(1), Duration.ofSeconds(1));

        assertThat(flat.initial()).isEqualTo(Duration.ofSeconds(1));
        assertThat(flat.max()).isEqualTo(Duration.ofSeconds(1));
        assertThat(flat).hasToString("backoff PT1S doubling to PT1S");
    }

    @Test
    void everyRetryWaitsTheDoubledDelayCappedAtMaxEvenAfterManyFailures() {
        Backoff b = Backoff.of(Duration.ofNanos(3), Duration.ofNanos(1000));
        for (int failures = 1; failures <= 200; failures++) {
            long base = Math.min(1000, 3L << Math.min(failures - 1, 20));
            assertThat(b.delayNanos(failures)).as("failure %d", failures).isBetween((long) (base * 0.8), base);
        }
        assertThat(b.delayNanos(Integer.MAX_VALUE)).isBetween(800L, 1000L);
    }
}
