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
    private final PublishPacer pacer = new PublishPacer(time.context(), () -> cpu, 0, () -> {
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

    /** A pacer with {@code rollcall.publish.max-rate}'s default ceiling: 20 a second, 50 ms apart. */
    private final PublishPacer paced = new PublishPacer(time.context(), () -> cpu, Duration.ofMillis(50).toNanos(),
            () -> {
                builds++;
                cpu += buildCost;
            });

    @Test
    void underChurnNoMoreBuildsStartThanTheCeilingAllowsWhateverTheNews() {
        for (int ms = 0; ms < 1_000; ms++) { // a change every millisecond for a second, every tenth urgent
            if (ms % 10 == 0) {
                paced.changedUrgently();
            } else {
                paced.changed();
            }
            paced.requestBuild(ms % 3 != 0);
            time.advance(Duration.ofMillis(1));
        }
        assertThat(builds).as("builds in one second at 20 a second").isBetween(19, 21);
    }

    @Test
    void urgentNewsWithinTheIntervalWaitsForItsEndAndNoLonger() {
        paced.changed();
        paced.requestBuild(false);
        time.runUntilIdle();
        assertThat(builds).isEqualTo(1);
        time.advance(Duration.ofMillis(10));
        paced.changedUrgently();
        paced.requestBuild(false);
        time.advance(Duration.ofMillis(39));
        assertThat(builds).isEqualTo(1);
        time.advance(Duration.ofMillis(1));
        assertThat(builds).as("50 ms after the last build started").isEqualTo(2);
    }

    @Test
    void newsAfterAQuietIntervalIsBuiltAtOnce() {
        paced.changed();
        paced.requestBuild(false);
        time.advance(Duration.ofMillis(50));
        paced.changedUrgently();
        paced.requestBuild(true);
        time.runUntilIdle();
        assertThat(builds).isEqualTo(2);
    }

    @Test
    void urgentNewsBringsABuildSpacedBeyondTheIntervalForwardToTheIntervalsEnd() {
        buildCost = Duration.ofMillis(20).toNanos(); // spaced 40 ms; the interval is 50 ms from the start
        paced.changed();
        paced.requestBuild(true);
        time.runUntilIdle();
        paced.changed();
        paced.requestBuild(true);
        paced.changedUrgently();
        paced.requestBuild(true);
        time.advance(Duration.ofMillis(49));
        assertThat(builds).isEqualTo(1);
        time.advance(Duration.ofMillis(1));
        assertThat(builds).isEqualTo(2);
        time.advance(Duration.ofMillis(100));
        assertThat(builds).as("one build for both").isEqualTo(2);
    }
}
