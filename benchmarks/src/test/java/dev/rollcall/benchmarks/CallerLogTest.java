package dev.rollcall.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What scenario 15 counts as "calls land only on the rest" after a drain. */
class CallerLogTest {

    private static final int DRAINED = 0;
    private static final int OTHER = 1;

    @Test
    void outIsTheFirstCallAfterTheLastOneTheDrainedWorkerAnswered() {
        CallerLog log = new CallerLog(List.of("a", "b"));
        log.add(90, DRAINED); // before the drain: not counted
        log.add(100, OTHER);
        log.add(110, DRAINED); // still reached after the drain
        log.add(120, OTHER);
        log.add(130, OTHER);
        log.add(140, OTHER);

        assertThat(log.outAfter(100, DRAINED, 3)).isEqualTo(20);
    }

    @Test
    void outIsUnknownUntilEnoughCallsInARowMissedTheDrainedWorker() {
        CallerLog log = new CallerLog(List.of("a", "b"));
        log.add(100, DRAINED);
        log.add(110, OTHER);
        log.add(120, OTHER);

        assertThat(log.outAfter(100, DRAINED, 3)).isEqualTo(-1);
        log.add(130, OTHER);
        assertThat(log.outAfter(100, DRAINED, 3)).isEqualTo(10);
        log.add(140, DRAINED); // a later call reached it after all: it was not out yet
        assertThat(log.outAfter(100, DRAINED, 3)).isEqualTo(-1);
    }

    @Test
    void aDrainedWorkerNeverCalledAfterTheDrainIsOutFromTheFirstCall() {
        CallerLog log = new CallerLog(List.of("a", "b"));
        log.add(95, DRAINED);
        log.add(105, OTHER);
        log.add(115, OTHER);

        assertThat(log.outAfter(100, DRAINED, 2)).isEqualTo(5);
    }

    @Test
    void resetForgetsTheCallsSoFar() {
        CallerLog log = new CallerLog(List.of("a", "b"));
        log.add(100, DRAINED);
        log.reset();

        assertThat(log.answeredBy(DRAINED)).isFalse();
        assertThat(log.outAfter(0, DRAINED, 1)).isEqualTo(-1);
    }
}
