package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.probe.FakeTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code rollcall.publish.max-rate} (20 a second) on the tracker, in virtual time: a fleet in churn
 * (every worker drains and resumes once, one news a millisecond, none of it flapping) reaches
 * listeners at most 20 times a second, each drain within one pacing interval, the last state winning.
 */
class PublishCeilingTest extends TrackerHarness {

    private static final Duration INTERVAL = Duration.ofMillis(50);

    @Test
    void aFleetInChurnIsPublishedAtMostTwentyTimesASecondAndEachDrainWithinOneInterval() {
        publishInterval = INTERVAL;
        tracker(1_000);
        List<WorkerEndpoint> fleet = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            fleet.add(WorkerEndpoint.of("127.0.0.1", 20_000 + i));
        }
        tracker.applyCandidates(new LinkedHashSet<>(fleet));
        time.runUntilIdle();
        for (WorkerEndpoint e : fleet) {
            net.pending(e.url()).answer("1.0.0", "i-" + e.port());
        }
        time.advance(INTERVAL);
        assertThat(last().workers()).hasSize(500);
        int before = published.size();

        for (int ms = 0; ms < 1_000; ms++) { // ms < 500: worker ms drains; then worker ms - 500 resumes
            WorkerEndpoint e = fleet.get(ms % 500);
            linkOf(e).push("1.0.0", "i-" + e.port(), Map.of(),
                    ms < 500 ? ServingState.DRAINING : ServingState.SERVING, ms + 2);
            time.advance(Duration.ofMillis(1));
            if (ms >= 50 && ms < 550) {
                WorkerEndpoint drained50msAgo = fleet.get(ms - 50);
                assertThat(state(drained50msAgo)).as("drained at %d ms, at %d ms", ms - 50, ms)
                        .isEqualTo(State.DRAINING);
            }
        }
        time.advance(INTERVAL);
        assertThat(published.size() - before).as("snapshots over one second of churn and its last interval")
                .isBetween(20, 22);
        assertThat(last().workers()).as("the last state wins").hasSize(500);
    }

    private FakeTransport.FakeLink linkOf(WorkerEndpoint e) {
        return net.links.stream().filter(l -> l.endpoint.equals(e) && !l.closed).reduce((x, y) -> y).orElseThrow();
    }
}
