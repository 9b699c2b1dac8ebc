package dev.rollcall.core.internal.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.core.internal.serial.VirtualTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** When snapshots are built, in virtual time, with a build cost the test sets. */
class PublishPacerTest {

    private final VirtualTime time = new VirtualTime();
    private long cpu;
    private long buildCost = Duration.ofMillis(1).toNanos();
    private int builds;
    private final PublishPacer pacer = new PublishPacer(time.context(), () -> cpu, () -> {
        builds++;
        cpu += buildCost;
    });

    private void change(boolean busy) {
        pacer.changed();
        pacer.requestBuild(busy);
        time.runUntilIdle();
    }

    @Test
    void buildsAtOnceWhenNothingIsInFlight() {
        change(false);
        change(false);
        assertThat(builds).isEqualTo(2);
    }

    @Test
    void nothingChangedBuildsNothing() {
        pacer.requestBuild(false);
        time.runUntilIdle();
        assertThat(builds).isZero();
    }

    @Test
    void whileAnswersKeepComingBuildsAreSpacedByEightTimesTheirCost() {
        change(true); // the first: no cost known yet
        change(true);
        change(true); // coalesced with the one before
        assertThat(builds).isEqualTo(1);
        time.advance(Duration.ofMillis(7));
        assertThat(builds).isEqualTo(1);
        time.advance(Duration.ofMillis(1));
        assertThat(builds).isEqualTo(2);
    }

    @Test
    void spacingIsCappedAtFortyMilliseconds() {
        buildCost = Duration.ofMillis(20).toNanos(); // eight times that would be 160 ms
        change(true);
        change(true);
        time.advance(Duration.ofMillis(39));
        assertThat(builds).isEqualTo(1);
        time.advance(Duration.ofMillis(1));
        assertThat(builds).isEqualTo(2);
    }

    @Test
    void urgentNewsBringsASpacedBuildForward() {
        change(true);
        change(true);
        assertThat(builds).isEqualTo(1);
        pacer.changedUrgently();
        pacer.requestBuild(true);
        time.runUntilIdle();
        assertThat(builds).isEqualTo(2);
        time.advance(Duration.ofMillis(50));
        assertThat(builds).as("the spaced build was cancelled, nothing left to build").isEqualTo(2);
    }

    @Test
    void theLastChangeOfABurstIsBuiltAtOnceWhenTheBurstEnds() {
        change(true);
        change(true);
        change(false);
        assertThat(builds).isEqualTo(2);
    }

    @Test
    void nothingIsBuiltAfterClose() {
        change(true);
        change(true);
        pacer.close();
        time.advance(Duration.ofMillis(50));
        assertThat(builds).isEqualTo(1);
    }
}
