package dev.rollcall.discovery.consul;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BlockingIndexTest {

    private static final long WAIT = TimeUnit.SECONDS.toNanos(60);

    @Test
    void blocksNextOnTheIndexTheServerReturned() {
        assertThat(BlockingIndex.next(0, 42)).isEqualTo(42);
        assertThat(BlockingIndex.next(42, 42)).isEqualTo(42);
        assertThat(BlockingIndex.next(42, 43)).isEqualTo(43);
    }

    @Test
    void resetsToZeroWhenTheIndexGoesBackwards() {
        assertThat(BlockingIndex.next(42, 7)).isZero();
        assertThat(BlockingIndex.wentBackwards(42, 7)).isTrue();
        assertThat(BlockingIndex.wentBackwards(42, 42)).isFalse();
    }

    @Test
    void neverUsesAnIndexBelowOneAfterAnAnswer() {
        assertThat(BlockingIndex.next(0, 0)).isEqualTo(1);
        // Zero after a reset or the first query: wait on 1, which is always safe.
        assertThat(BlockingIndex.next(1, 0)).as("backwards from 1 to 0: reset").isZero();
        assertThat(BlockingIndex.next(0, 0)).isEqualTo(1);
    }

    @Test
    void treatsIndexesAsUnsigned() {
        long huge = Long.parseUnsignedLong("18446744073709551000");   // above Long.MAX_VALUE
        assertThat(BlockingIndex.next(5, huge)).isEqualTo(huge);
        assertThat(BlockingIndex.wentBackwards(huge, 5)).isTrue();
    }

    @Test
    void aBlockingQueryThatCameBackEarlyWithoutChangeCallsForBackoff() {
        long early = TimeUnit.MILLISECONDS.toNanos(5);
        assertThat(BlockingIndex.returnedEarlyWithoutChange(42, 42, early, WAIT)).isTrue();
        assertThat(BlockingIndex.returnedEarlyWithoutChange(42, 7, early, WAIT)).as("went backwards, early").isTrue();
        assertThat(BlockingIndex.returnedEarlyWithoutChange(42, 43, early, WAIT)).as("a change").isFalse();
        assertThat(BlockingIndex.returnedEarlyWithoutChange(42, 42, WAIT, WAIT)).as("the wait ran out").isFalse();
        assertThat(BlockingIndex.returnedEarlyWithoutChange(0, 42, early, WAIT)).as("non-blocking query").isFalse();
    }
}
