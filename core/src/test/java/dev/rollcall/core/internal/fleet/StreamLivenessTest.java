package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.probe.FakeTransport;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A worker's host cut off (no FIN, no RST) as the coordinator sees it: a {@code WatchWorkerInfo}
 * stream whose worker granted heartbeats goes silent. Virtual time, keepalive defaults (5 s + 3 s).
 */
class StreamLivenessTest extends TrackerHarness {

    private FakeTransport.FakeLink linkOf(WorkerEndpoint e) {
        FakeTransport.FakeLink found = null;
        for (FakeTransport.FakeLink l : net.links) {
            if (l.endpoint.equals(e) && !l.closed) {
                found = l;
            }
        }
        return found;
    }

    private String reason(WorkerEndpoint e) {
        return last().status(e.url()).orElseThrow().reason();
    }

    /** {@code seconds} of virtual time in steps of one, {@code b} sending its heartbeat every 5 s meanwhile. */
    private void passWithBHeartbeating(int seconds) {
        for (int i = 0; i < seconds; i++) {
            time.advance(Duration.ofSeconds(1));
            if ((time.read() / 1_000_000_000L) % 5 == 0 && linkOf(b) != null && linkOf(b).streaming()) {
                linkOf(b).heartbeat();
            }
        }
    }

    @Test
    void aStreamSilentPastItsHeartbeatAndTheTimeoutTakesTheWorkerOutAtOnceAndReprobesOverANewConnection() {
        net.heartbeatMillis = 5_000;
        tracker(64);
        candidates(a, b);
        answer(a, "1.0.0", "i1");
        answer(b, "1.0.0", "i2");
        FakeTransport.FakeLink cutOff = linkOf(a);
        assertThat(cutOff.askedHeartbeat).as("each stream asks for keepalive-time").isEqualTo(Duration.ofSeconds(5));

        // a's last word; from here on its host is cut off: nothing arrives, and nothing says so.
        cutOff.heartbeat();
        long lastHeard = time.read();
        passWithBHeartbeating(8);
        assertThat(state(a)).as("8 s of silence is within 5 s + 3 s").isEqualTo(State.COMPATIBLE);

        passWithBHeartbeating(1); // past the limit; the sweep runs once a second
        assertThat(time.read() - lastHeard).isEqualTo(Duration.ofSeconds(9).toNanos());
        assertThat(state(a)).isEqualTo(State.PENDING);
        assertThat(reason(a)).isEqualTo("connection lost (its WatchWorkerInfo stream went silent: nothing within its"
                + " 5000 ms heartbeat + 3000 ms (rollcall.probe.keepalive-timeout)); probing again");
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(b.url());
        assertThat(cutOff.closed).as("the wedged connection is dropped").isTrue();
        assertThat(cutOff.streaming()).as("and its stream cancelled").isFalse();
        FakeTransport.FakeLink fresh = linkOf(a);
        assertThat(fresh).isNotSameAs(cutOff);
        assertThat(net.pending(a.url()).link()).as("the re-probe goes over a new connection").isSameAs(fresh);

        fail(a); // the new connection gets nothing either
        assertThat(state(a)).isEqualTo(State.UNREACHABLE);
        assertThat(reason(a)).isEqualTo("UNAVAILABLE: refused (after its WatchWorkerInfo stream went silent: nothing"
                + " within its 5000 ms heartbeat + 3000 ms (rollcall.probe.keepalive-timeout))");
        assertThat(state(b)).as("b kept sending heartbeats").isEqualTo(State.COMPATIBLE);

        time.advance(Duration.ofSeconds(1)); // the retry, after the backoff
        answer(a, "1.0.0", "i1");
        assertThat(state(a)).as("back once the host is reachable again").isEqualTo(State.COMPATIBLE);
        assertThat(reason(a)).isEmpty();
    }

    @Test
    void aStallOfTheCoordinatorItselfIsNotTakenForItsWorkersSilence() {
        net.heartbeatMillis = 5_000;
        tracker(64);
        candidates(a, b);
        answer(a, "1.0.0", "i1");
        answer(b, "1.0.0", "i2");
        linkOf(a).heartbeat();
        linkOf(b).heartbeat();
        time.advance(Duration.ofSeconds(4));
        long probes = net.sentTo(a.url()) + net.sentTo(b.url());

        // The coordinator runs nothing for 20 s (a GC pause, a starved CPU): the workers' heartbeats wait
        // unread meanwhile, and the first sweep after it runs 19 s late, before the network threads read them.
        time.stall(Duration.ofSeconds(20));
        time.advance(Duration.ZERO);
        assertThat(state(a)).as("24 s since a's last heartbeat, 19 of them the coordinator's own stall")
                .isEqualTo(State.COMPATIBLE);
        assertThat(state(b)).isEqualTo(State.COMPATIBLE);
        assertThat(net.sentTo(a.url()) + net.sentTo(b.url())).as("no re-probe storm").isEqualTo(probes);

        // b's heartbeats are read again; a's host is cut off from here on: its silence still counts.
        linkOf(b).heartbeat();
        passWithBHeartbeating(3);
        assertThat(state(a)).as("27 s since a's heartbeat, 19 of them the stall: 8 s, within 5 s + 3 s")
                .isEqualTo(State.COMPATIBLE);
        passWithBHeartbeating(1);
        assertThat(state(a)).as("past 5 s + 3 s, the stall aside").isEqualTo(State.PENDING);
        assertThat(state(b)).isEqualTo(State.COMPATIBLE);
    }

    @Test
    void heartbeatsKeepAStreamAliveWithoutATaskOnTheSerialContextOrASnapshot() {
        net.heartbeatMillis = 5_000;
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        int snapshots = published.size();
        for (int round = 0; round < 24; round++) { // two minutes
            time.advance(Duration.ofSeconds(5));
            linkOf(a).heartbeat();
            assertThat(time.queuedTasks()).as("a heartbeat takes no hop to the resolver's thread").isZero();
        }
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        assertThat(published).as("no snapshot for heartbeats").hasSize(snapshots);
        assertThat(net.links).as("one connection all along").hasSize(1);
    }

    @Test
    void aPushCountsAsProofOfLifeToo() {
        net.heartbeatMillis = 5_000;
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        for (int round = 0; round < 6; round++) {
            time.advance(Duration.ofSeconds(7));
            linkOf(a).push("1.0.0", "i1", Map.of("round", String.valueOf(round)), ServingState.SERVING);
        }
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        assertThat(net.links).hasSize(1);
    }

    @Test
    void aWorkerThatGrantsNoHeartbeatIsNeverTakenForGoneBecauseItIsQuiet() {
        net.heartbeatMillis = 0; // a worker from before heartbeats: it only speaks on change
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        time.advance(Duration.ofMinutes(5));
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        assertThat(net.links).hasSize(1);
        assertThat(linkOf(a).streaming()).isTrue();
    }

    @Test
    void aWorkerThatGrantsALongerHeartbeatThanAskedIsGivenItsOwnIntervalPlusTheTimeout() {
        net.heartbeatMillis = 20_000; // asked for 5 s, granted 20 s: silence shorter than 23 s is normal
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        time.advance(Duration.ofSeconds(23));
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        time.advance(Duration.ofSeconds(1));
        assertThat(state(a)).isEqualTo(State.PENDING);
        assertThat(reason(a)).contains("nothing within its 20000 ms heartbeat + 3000 ms");
    }

    @Test
    void theSweepStopsOnceNoStreamIsFollowed() {
        net.heartbeatMillis = 5_000;
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        assertThat(time.pendingTimers()).as("its refresh, and the sweep").isEqualTo(2);
        tracker.applyCandidates(Set.of()); // a leaves: its stream is closed
        time.advance(Duration.ofSeconds(3));
        assertThat(time.pendingTimers()).as("no sweep left running").isZero();
    }
}
