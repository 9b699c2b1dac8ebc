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
        // Zero is the server bug, not a reset: treat it as 1 and block, never query again at once.
        assertThat(BlockingIndex.next(1, 0)).as("1 then 0: wait on 1").isEqualTo(1);
        assertThat(BlockingIndex.next(42, 0)).as("42 then 0: wait on 1, no non-blocking query").isEqualTo(1);
        assertThat(BlockingIndex.wentBackwards(42, 0)).as("zero is not a step backwards").isFalse();
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
