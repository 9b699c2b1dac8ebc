package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetEvent;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.probe.FakeTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Flap damping in virtual time: the penalty's arithmetic (a change adds 1, halves every 15 s,
 * damped at 6, back below 3, never held more than 30 s after the last change), what snapshots
 * show meanwhile, the events, and the honest events it leaves alone.
 */
class FlapDampingTest extends TrackerHarness {

    private long revision;
    private int flips;

    private FakeTransport.FakeLink linkOf(WorkerEndpoint e) {
        FakeTransport.FakeLink found = null;
        for (FakeTransport.FakeLink l : net.links) {
            if (l.endpoint.equals(e) && !l.closed) {
                found = l;
            }
        }
        return found;
    }

    /** {@code e} pushes {@code version} on its stream, as a new revision, and the tracker applies it. */
    private void push(WorkerEndpoint e, String version, ServingState state) {
        linkOf(e).push(version, "i-" + e.port(), Map.of(), state, ++revision);
        time.runUntilIdle();
    }

    /** {@code changes} pushes on {@code e}'s stream alternating 9.9.9 and 1.0.0 (from the last), at one instant. */
    private void flap(WorkerEndpoint e, int changes) {
        for (int i = 0; i < changes; i++) {
            push(e, ++flips % 2 == 1 ? "9.9.9" : "1.0.0", ServingState.SERVING);
        }
    }

    private void fleetOfTwo() {
        tracker(64);
        candidates(a, b);
        answer(a, "1.0.0", "i-" + a.port());
        answer(b, "1.0.0", "i-" + b.port());
    }

    private WorkerStatus statusOf(WorkerEndpoint e) {
        return last().status(e.url()).orElseThrow();
    }

    private List<FleetEvent> events() {
        List<FleetEvent> events = new ArrayList<>();
        for (int i = 1; i < published.size(); i++) {
            events.addAll(FleetEvent.between(published.get(i - 1), published.get(i)));
        }
        return events;
    }

    private boolean everDamped() {
        return published.stream().flatMap(s -> s.statuses().stream()).anyMatch(FleetEvent.WorkerDamped::shows);
    }

    @Test
    void theHoldLastsUntilThePenaltyDecaysBelowTheReuseThresholdAndNeverPastTheMaximum() {
        assertThat(FlapDamping.holdNanos(6)).as("6 halves to 3 in one half-life").isEqualTo(Duration.ofSeconds(15).toNanos());
        assertThat(FlapDamping.holdNanos(8)).as("15 s × log2(8 / 3)").isBetween(21_225_000_000L, 21_226_000_000L);
        assertThat(FlapDamping.holdNanos(3)).isZero();
        assertThat(FlapDamping.holdNanos(FlapDamping.CEILING)).isEqualTo(FlapDamping.MAX_HOLD.toNanos());
        assertThat(FlapDamping.holdNanos(1e9)).isEqualTo(FlapDamping.MAX_HOLD.toNanos());
    }

    @Test
    void aWorkerAlternatingVersionsIsDampedAtItsSixthChangeAndHeldOutWhateverItAnswers() {
        fleetOfTwo();
        flap(a, 5);
        assertThat(statusOf(a).reason()).as("five changes: penalty 5").doesNotStartWith("damped");
        flap(a, 1);
        WorkerStatus damped = statusOf(a);
        assertThat(damped.state()).isEqualTo(State.REJECTED);
        assertThat(damped.reason()).isEqualTo("damped for flapping: its verdict or version changed too often"
                + " (penalty 6.0, damped from 6.0, half-life 15 s); held out until 1970-01-01T00:00:15Z");
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(b.url());

        int snapshots = published.size();
        flap(a, 500);
        assertThat(published).as("no snapshot for 500 answers while damped").hasSize(snapshots);
        assertThat(statusOf(a)).isSameAs(damped);
        assertThat(events()).filteredOn(e -> e instanceof FleetEvent.WorkerDamped).hasSize(1);
    }

    @Test
    void aDrainingWorkerThatKeepsChangingItsVersionIsDampedToo() {
        fleetOfTwo();
        for (int i = 0; i < 7; i++) { // out of use throughout after the first, its status new each time
            push(a, i % 2 == 0 ? "9.9.9" : "1.0.0", ServingState.DRAINING);
        }
        assertThat(FleetEvent.WorkerDamped.shows(statusOf(a))).isTrue();
    }

    @Test
    void aDampedWorkerReturnsOneHalfLifeAfterSixChangesWithOneEventEachWay() {
        fleetOfTwo();
        flap(a, 6);
        assertThat(FleetEvent.WorkerDamped.shows(statusOf(a))).isTrue();
        time.advance(Duration.ofSeconds(15).minusMillis(1));
        assertThat(FleetEvent.WorkerDamped.shows(statusOf(a))).isTrue();
        time.advance(Duration.ofMillis(1));
        assertThat(statusOf(a).state()).as("its last answer, 1.0.0, judged again").isEqualTo(State.COMPATIBLE);
        List<FleetEvent> events = events();
        assertThat(events).filteredOn(e -> e instanceof FleetEvent.WorkerDamped).hasSize(1);
        assertThat(events).filteredOn(e -> e instanceof FleetEvent.WorkerUndamped)
                .extracting(e -> ((FleetEvent.WorkerUndamped) e).endpoint()).containsExactly(a);
    }

    @Test
    void aWorkerThatKeepsFlappingIsHeldOnWithOneSnapshotPerExtensionAndNoSecondEvent() {
        fleetOfTwo();
        flap(a, 6);
        time.advance(Duration.ofMillis(7_500));
        flap(a, 4); // 6 / √2 + 4 ≈ 8.24: at the hold's end (7.5 s on) ≈ 5.83, held 15 s × log2(5.83 / 3) ≈ 14.4 s more
        int snapshots = published.size();
        time.advance(Duration.ofMillis(7_500));
        assertThat(published).as("the new 'until'").hasSize(snapshots + 1);
        assertThat(statusOf(a).reason()).startsWith("damped for flapping")
                .contains("held out until 1970-01-01T00:00:14.3"); // the test's clock stands at 1970-01-01T00:00:00Z
        time.advance(Duration.ofSeconds(14));
        assertThat(FleetEvent.WorkerDamped.shows(statusOf(a))).isTrue();
        time.advance(Duration.ofSeconds(1));
        assertThat(statusOf(a).state()).isEqualTo(State.COMPATIBLE);
        assertThat(events()).filteredOn(e -> e instanceof FleetEvent.WorkerDamped).hasSize(1);
        assertThat(events()).filteredOn(e -> e instanceof FleetEvent.WorkerUndamped).hasSize(1);
    }

    @Test
    void aWorkerHeldAtTheCeilingReturnsTheMaximumHoldAfterItsLastChange() {
        fleetOfTwo();
        flap(a, 5_000);
        time.advance(FlapDamping.MAX_HOLD.minusMillis(1));
        assertThat(FleetEvent.WorkerDamped.shows(statusOf(a))).isTrue();
        time.advance(Duration.ofMillis(1));
        assertThat(statusOf(a).state()).isEqualTo(State.COMPATIBLE);
    }

    @Test
    void aWorkerThatLeavesWhileDampedIsForgotten() {
        fleetOfTwo();
        flap(a, 6);
        candidates(b);
        candidates(a, b);
        answer(a, "1.0.0", "i-new");
        assertThat(statusOf(a).state()).as("a new candidate starts without a penalty").isEqualTo(State.COMPATIBLE);
    }

    @Test
    void anHonestDrainAndResumeAndThenARestartInPlaceAreNotDamped() {
        fleetOfTwo();
        push(a, "1.0.0", ServingState.DRAINING);
        assertThat(statusOf(a).state()).isEqualTo(State.DRAINING);
        push(a, "1.0.0", ServingState.SERVING);
        assertThat(statusOf(a).state()).isEqualTo(State.COMPATIBLE);

        linkOf(a).drop(); // the process restarts on the same address
        time.runUntilIdle();
        assertThat(statusOf(a).state()).isEqualTo(State.PENDING);
        net.pending(a.url()).answer("1.0.0", "i-restarted");
        time.runUntilIdle();
        assertThat(statusOf(a).state()).isEqualTo(State.COMPATIBLE);
        assertThat(everDamped()).isFalse();
    }

    @Test
    void aRollingUpgradeThatDrainsAndRestartsEveryWorkerDampsNone() {
        tracker(64);
        candidates(a, b, c);
        for (WorkerEndpoint e : List.of(a, b, c)) {
            answer(e, "1.0.0", "i-" + e.port());
        }
        for (WorkerEndpoint e : List.of(a, b, c)) {
            push(e, "1.0.0", ServingState.DRAINING);
            linkOf(e).drop();
            time.runUntilIdle();
            net.pending(e.url()).fail(); // down while it restarts
            time.advance(Duration.ofSeconds(1));
            net.pending(e.url()).answer("1.0.0", "i-upgraded-" + e.port());
            time.runUntilIdle();
            assertThat(statusOf(e).state()).isEqualTo(State.COMPATIBLE);
        }
        FleetSnapshot end = last();
        assertThat(end.workers()).hasSize(3);
        assertThat(everDamped()).isFalse();
    }
}
