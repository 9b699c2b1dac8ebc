package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.probe.FakeTransport;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * What a user's failed call does to the fleet (passive ejection and its rate limit), and the
 * verification the {@code rollcall:} channel's gate asks for, in virtual time over a fake transport.
 */
class CallFailureTest extends TrackerHarness {

    private void fleetOfThree() {
        tracker(64);
        candidates(a, b, c);
        answer(a, "1.0.0", "i1");
        answer(b, "1.0.0", "i2");
        answer(c, "1.0.0", "i3");
        assertThat(last().counts().compatible()).isEqualTo(3);
    }

    @Test
    void aFailedCallTakesTheWorkerOutAtOnceAndItsNextAnswerBringsItBack() {
        fleetOfThree();
        tracker.calls().callFailed(a.url(), "UNAVAILABLE: connection reset");
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.PENDING);
        assertThat(last().status(a.url()).orElseThrow().reason()).contains("a call failed");
        assertThat(net.unanswered()).as("probed again at once, ahead of any backoff").hasSize(1);

        answer(a, "1.0.0", "i1");
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
    }

    @Test
    void failuresOfEveryWorkerAtOnceTakeOutOnlyATenthOfTheFleetAndAtLeastOne() {
        fleetOfThree();
        tracker.calls().callFailed(a.url(), "UNAVAILABLE");
        tracker.calls().callFailed(b.url(), "UNAVAILABLE");
        tracker.calls().callFailed(c.url(), "UNAVAILABLE");
        time.runUntilIdle();
        assertThat(last().counts().compatible()).as("one of three out; the others kept").isEqualTo(2);
        assertThat(state(a)).isEqualTo(State.PENDING);
    }

    @Test
    void aWorkerIsTakenOutAtMostOnceASecond() {
        fleetOfThree();
        tracker.calls().callFailed(a.url(), "UNAVAILABLE");
        time.runUntilIdle();
        answer(a, "1.0.0", "i1");
        int probes = net.sent.size();

        tracker.calls().callFailed(a.url(), "UNAVAILABLE");
        time.runUntilIdle();
        assertThat(state(a)).as("within a second of the last time").isEqualTo(State.COMPATIBLE);
        assertThat(net.sent).hasSize(probes);

        time.advance(Duration.ofSeconds(1));
        tracker.calls().callFailed(a.url(), "UNAVAILABLE");
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.PENDING);
    }

    /**
     * The interval is a second, not a tick: failures 1 ms, 500 ms and 999 ms after an ejection take
     * the worker (back in since) out no more, and one a full second after it does.
     */
    @Test
    void failuresWithinASecondOfAnEjectionDoNotTakeTheWorkerOutAgainAndOneASecondLaterDoes() {
        fleetOfThree();
        tracker.calls().callFailed(a.url(), "UNAVAILABLE");
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.PENDING);
        answer(a, "1.0.0", "i1");
        int probes = net.sent.size();
        long at = 0;
        for (long ms : new long[] {1, 500, 999}) {
            time.advance(Duration.ofMillis(ms - at));
            at = ms;
            tracker.calls().callFailed(a.url(), "UNAVAILABLE");
            time.runUntilIdle();
            assertThat(state(a)).as("%d ms after the ejection", ms).isEqualTo(State.COMPATIBLE);
            assertThat(net.sent).as("no probe %d ms after the ejection", ms).hasSize(probes);
        }
        time.advance(Duration.ofMillis(1000 - at));
        tracker.calls().callFailed(a.url(), "UNAVAILABLE");
        time.runUntilIdle();
        assertThat(state(a)).as("a second after the ejection").isEqualTo(State.PENDING);
        assertThat(net.sent).hasSize(probes + 1);
    }

    @Test
    void aCallThatTimedOutOnAWorkerThatAnswersAProbeAtOnceChangesNothing() {
        fleetOfThree();
        int snapshots = published.size();
        tracker.calls().callTimedOut(a.url(), "DEADLINE_EXCEEDED: deadline exceeded after 0.5s");
        time.runUntilIdle();
        assertThat(state(a)).as("a suspect stays in use").isEqualTo(State.COMPATIBLE);
        assertThat(net.unanswered()).as("probed at once").hasSize(1);

        answer(a, "1.0.0", "i1"); // a sign of life: the deadline was the call's own
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        assertThat(published).as("no snapshot for a slow query").hasSize(snapshots);
    }

    @Test
    void aCallThatTimedOutOnASilentWorkerTakesItOutOnceTheProbeSentAtOnceFailsToo() {
        fleetOfThree();
        tracker.calls().callTimedOut(a.url(), "DEADLINE_EXCEEDED");
        time.runUntilIdle();
        fail(a);
        assertThat(state(a)).isEqualTo(State.UNREACHABLE);
        assertThat(last().status(a.url()).orElseThrow().reason()).contains("refused");
        assertThat(last().counts().compatible()).isEqualTo(2);

        time.advance(INITIAL);
        answer(a, "1.0.0", "i1");
        assertThat(state(a)).as("back when a retry answers").isEqualTo(State.COMPATIBLE);
    }

    @Test
    void aWorkerIsProbedForTimedOutCallsAtMostOnceASecond() {
        fleetOfThree();
        tracker.calls().callTimedOut(a.url(), "DEADLINE_EXCEEDED");
        time.runUntilIdle();
        answer(a, "1.0.0", "i1");
        int probes = net.sent.size();

        time.advance(Duration.ofMillis(999));
        tracker.calls().callTimedOut(a.url(), "DEADLINE_EXCEEDED");
        time.runUntilIdle();
        assertThat(net.sent).as("999 ms after the last one").hasSize(probes);

        time.advance(Duration.ofMillis(1));
        tracker.calls().callTimedOut(a.url(), "DEADLINE_EXCEEDED");
        time.runUntilIdle();
        assertThat(net.sent).as("a second after the last one").hasSize(probes + 1);
    }

    @Test
    void aConnectionIsVerifiedOnlyByAFreshAnswerOfTheAcceptedInstance() {
        fleetOfThree();
        CompletableFuture<Boolean> same = new CompletableFuture<>();
        tracker.calls().verify(a.url(), same);
        time.runUntilIdle();
        assertThat(same).as("waits for a probe that starts now").isNotDone();
        answer(a, "1.0.0", "i1");
        assertThat(same).isCompletedWithValue(true);

        CompletableFuture<Boolean> restarted = new CompletableFuture<>();
        tracker.calls().verify(b.url(), restarted);
        time.runUntilIdle();
        answer(b, "1.0.0", "i2-new"); // another process answers at b's address
        assertThat(restarted).as("not the instance the last snapshot accepted").isCompletedWithValue(false);

        CompletableFuture<Boolean> unknown = new CompletableFuture<>();
        tracker.calls().verify("grpc://127.0.0.1:9", unknown);
        assertThat(unknown).isCompletedWithValue(false);

        CompletableFuture<Boolean> gone = new CompletableFuture<>();
        tracker.calls().verify(c.url(), gone);
        time.runUntilIdle();
        candidates(a, b);
        answer(c, "1.0.0", "i3"); // the probe in flight when it left still ends
        assertThat(gone).as("left before its probe answered").isCompletedWithValue(false);
    }

    @Test
    void aHandedOutChannelOutlivesFailedProbesAndOnlyItsConnectionIsDropped() {
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        FakeTransport.FakeLink link = net.sent.get(0).link();
        tracker.calls().share(a.url());

        link.drop();
        time.runUntilIdle();
        fail(a);
        assertThat(link.closed).as("the user's channel stays open").isFalse();
        assertThat(link.reconnects).as("but the failed probe's connection is not reused").isEqualTo(1);

        time.advance(INITIAL);
        answer(a, "1.0.0", "i1");
        assertThat(net.sent.get(net.sent.size() - 1).link()).as("retried over the same channel").isSameAs(link);
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);

        candidates(b);
        answer(b, "1.0.0", "i2");
        assertThat(link.closed).as("closed when the worker left (once the newcomer's probe is done)").isTrue();
    }
}
