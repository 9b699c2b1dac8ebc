package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.probe.FakeTransport;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The tracker with its scheduler, state machine, builder and pacer, in virtual time and over a fake
 * transport: every timing rule checked to the millisecond, no sockets, no sleeps.
 */
class FleetTrackerTest extends TrackerHarness {

    @Test
    void probesEachNewCandidateOnceAndPublishesThePolicysVerdict() {
        tracker(64);
        candidates(a, b);
        assertThat(last().counts().pending()).isEqualTo(2);
        answer(a, "1.0.0", "i1");
        answer(b, "2.0.0", "i2");

        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        assertThat(state(b)).isEqualTo(State.REJECTED);
        assertThat(last().status(b.url()).orElseThrow().reason()).isEqualTo("version '2.0.0' is not 1.0.0");
        candidates(a, b);
        assertThat(net.sentTo(a.url())).isEqualTo(1);
        assertThat(net.sentTo(b.url())).isEqualTo(1);
    }

    @Test
    void retriesAFailedProbeWithDoublingBackoff() {
        tracker(64);
        candidates(a);
        fail(a);
        assertThat(state(a)).isEqualTo(State.UNREACHABLE);

        time.advance(Duration.ofMillis(89));
        assertThat(net.sentTo(a.url())).isEqualTo(1);
        time.advance(Duration.ofMillis(2)); // 0.9 × 100 ms
        assertThat(net.sentTo(a.url())).isEqualTo(2);

        fail(a);
        time.advance(Duration.ofMillis(179));
        assertThat(net.sentTo(a.url())).isEqualTo(2);
        time.advance(Duration.ofMillis(2)); // 0.9 × 200 ms
        assertThat(net.sentTo(a.url())).isEqualTo(3);
    }

    @Test
    void aWorkerThatDropsSoonAfterAnsweringKeepsBackingOffFurther() {
        tracker(64);
        candidates(a);
        fail(a);
        time.advance(Duration.ofMillis(91));
        answer(a, "1.0.0", "i1");
        time.advance(Duration.ofMillis(500)); // less than the 1 s (10 × initial) it must stay up
        net.links.get(net.links.size() - 1).drop();
        time.runUntilIdle();
        fail(a); // the re-probe after the drop

        time.advance(Duration.ofMillis(179)); // the second failure's delay, not the first's
        assertThat(net.unanswered()).isEmpty();
        time.advance(Duration.ofMillis(2));
        assertThat(net.unanswered()).hasSize(1);
    }

    @Test
    void aWorkerThatStayedUpStartsItsBackoffOver() {
        tracker(64);
        candidates(a);
        fail(a);
        time.advance(Duration.ofMillis(91));
        answer(a, "1.0.0", "i1");
        time.advance(Duration.ofSeconds(1)); // stayed up for 10 × initial
        net.links.get(net.links.size() - 1).drop();
        time.runUntilIdle();
        fail(a);

        time.advance(Duration.ofMillis(89));
        assertThat(net.unanswered()).isEmpty();
        time.advance(Duration.ofMillis(2)); // back to the first delay
        assertThat(net.unanswered()).hasSize(1);
    }

    @Test
    void refreshesAnAnsweredWorkerAfterTheIntervalLessJitter() {
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        time.advance(Duration.ofMillis(56_999));
        assertThat(net.sentTo(a.url())).isEqualTo(1);
        time.advance(Duration.ofMillis(2)); // 0.95 × 60 s
        assertThat(net.sentTo(a.url())).isEqualTo(2);

        int snapshots = published.size();
        answer(a, "1.0.0", "i1");
        assertThat(published).as("a refresh that finds the same answer publishes nothing").hasSize(snapshots);
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
    }

    @Test
    void aDroppedConnectionTakesTheWorkerOutUntilItsReprobeAnswers() {
        tracker(64);
        candidates(a, b);
        answer(a, "1.0.0", "i1");
        answer(b, "1.0.0", "i2");
        assertThat(last().workers()).hasSize(2);

        net.links.get(0).drop(); // a restarted in place, perhaps with another version
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.PENDING);
        assertThat(last().status(a.url()).orElseThrow().reason()).isEqualTo("connection lost (its WatchWorkerInfo stream ended: UNAVAILABLE: connection lost); probing again");
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(b.url());

        time.advance(Duration.ofSeconds(1)); // the re-probe is in flight, unanswered
        assertThat(net.pending(a.url())).isNotNull();
        assertThat(state(a)).isEqualTo(State.PENDING);

        answer(a, "2.0.0", "i3");
        assertThat(state(a)).isEqualTo(State.REJECTED);
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(b.url());
    }

    @Test
    void neverHasMoreProbesInFlightThanTheConcurrencyLimit() {
        tracker(2);
        candidates(a, b, c);
        assertThat(net.unanswered()).hasSize(2);
        answer(a, "1.0.0", "i1");
        assertThat(net.unanswered()).hasSize(2);
        assertThat(net.sentTo(c.url())).isEqualTo(1);
    }

    @Test
    void spacesBuildsWhileAnswersKeepComingAndPublishesTheLastAtOnce() {
        tracker(1);
        candidates(a, b, c); // builds at once: nothing built yet to space from
        int first = published.size();

        answer(a, "1.0.0", "i1"); // b and c still to go: spaced by 8 × the 0.5 ms a build costs
        assertThat(published).hasSize(first);
        time.advance(Duration.ofMillis(3));
        assertThat(published).hasSize(first);
        time.advance(Duration.ofMillis(2));
        assertThat(published).hasSize(first + 1);
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);

        answer(b, "1.0.0", "i2");
        answer(c, "1.0.0", "i3"); // nothing in flight or queued: no spacing
        assertThat(last().workers()).hasSize(3);
    }

    @Test
    void aNewCandidateIsListedAtOnceWhileProbesAreInFlight() {
        tracker(1);
        candidates(a, b);
        answer(a, "1.0.0", "i1"); // b still in flight: this build is spaced, 4 ms
        time.advance(Duration.ofMillis(5));
        int before = published.size();

        candidates(a, b, c); // discovery's news: the new candidate is listed in the next build, not 4 ms later
        assertThat(published).hasSize(before + 1);
        assertThat(last().status(c.url())).get().extracting(s -> s.state()).isEqualTo(State.PENDING);
    }

    @Test
    void newsThatTakesAWorkerInUseAwayIsNeverSpaced() {
        tracker(1);
        candidates(a, b, c);
        answer(a, "1.0.0", "i1");
        time.advance(Duration.ofMillis(5));
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);

        candidates(b, c); // a left while b is still being probed
        assertThat(last().status(a.url())).isEmpty();
    }

    @Test
    void aWorkerThatLeftWhileBeingProbedIsForgotten() {
        tracker(64);
        candidates(a);
        FakeTransport.Probe inFlight = net.pending(a.url());
        candidates();
        time.advance(Duration.ofMillis(5)); // not urgent (nobody used it): one build spacing
        assertThat(last().statuses()).isEmpty();
        assertThat(inFlight.link().closed).isTrue();

        inFlight.answer("1.0.0", "i1");
        time.runUntilIdle();
        time.advance(REFRESH.multipliedBy(2));
        assertThat(last().statuses()).isEmpty();
        assertThat(net.sentTo(a.url())).isEqualTo(1);
        assertThat(time.pendingTimers()).isZero();
    }

    @Test
    void aLeaversKeptConnectionClosesAfterTheSnapshotWithoutItOnceTheNewcomersAnswered() {
        FakeTransport.FakeLink linkOfB = aAndBAnswered();
        int before = published.size();

        tracker.applyCandidates(new LinkedHashSet<>(List.of(a, c)));
        assertThat(linkOfB.closed).as("not on the way of the news and of c's probe").isFalse();
        time.runUntilIdle();
        assertThat(published.size()).isGreaterThan(before);
        assertThat(published.get(before).status(b.url())).as("the first snapshot after the set").isEmpty();
        assertThat(linkOfB.closed).as("open, unused, while c's probe is in flight").isFalse();

        answer(c, "1.0.0", "i3");
        assertThat(linkOfB.closed).isTrue();

        // Closed with the tracker, when the tracker closes before it got to it.
        tracker.applyCandidates(new LinkedHashSet<>(List.of(c)));
        FakeTransport.FakeLink linkOfA = net.firstLinkTo(a.url());
        tracker.close();
        assertThat(linkOfA.closed).isTrue();
    }

    @Test
    void aLeaversKeptConnectionClosesWithinASecondWhileProbesStayInFlight() {
        FakeTransport.FakeLink linkOfB = aAndBAnswered();

        candidates(a, c); // c never answers
        time.advance(Duration.ofNanos(Leavers.CLOSE_LEFT_WITHIN_NANOS - 1_000_000));
        assertThat(linkOfB.closed).isFalse();
        time.advance(Duration.ofMillis(1));
        assertThat(linkOfB.closed).isTrue();
        assertThat(net.pending(c.url())).as("c's probe still in flight").isNotNull();
    }

    @Test
    void aVerificationWaitingOnAWorkerThatLeftIsAnsweredAtOnceWhileProbesAreBusy() {
        tracker(1);
        candidates(a);
        answer(a, "1.0.0", "i1");
        candidates(a, c); // c's probe takes the only place
        CompletableFuture<Boolean> verified = new CompletableFuture<>();
        tracker.calls().verify(a.url(), verified);
        time.runUntilIdle();
        assertThat(verified).as("a's fresh probe waits for c's").isNotDone();

        candidates(c);
        assertThat(verified).isCompletedWithValue(false);
        assertThat(net.firstLinkTo(a.url()).closed).isTrue();
    }

    @Test
    void logsEachVerdictChangeOnceAndNothingForAnUnchangedWorker() {
        String firstTwo = logDuring(() -> {
            tracker(64);
            candidates(a, b);
            answer(a, "1.0.0", "i1");
            answer(b, "2.0.0", "i2");
        });
        assertThat(firstTwo).containsOnlyOnce("worker grpc://127.0.0.1:7001 is compatible (version '1.0.0')")
                .containsOnlyOnce("worker grpc://127.0.0.1:7002 is rejected (version '2.0.0'): version '2.0.0' is not 1.0.0");

        String later = logDuring(() -> {
            candidates(a, b, c); // a new snapshot, in which a and b did not change
            answer(c, "1.0.0", "i3");
        });
        assertThat(later).containsOnlyOnce("worker grpc://127.0.0.1:7003 is compatible (version '1.0.0')")
                .doesNotContain("7001 is").doesNotContain("7002 is");
    }

    /** What slf4j-simple (core's test binding) logs to {@code System.err} while {@code steps} run. */
    private static String logDuring(Runnable steps) {
        PrintStream err = System.err;
        ByteArrayOutputStream copy = new ByteArrayOutputStream();
        System.setErr(new PrintStream(copy, true, StandardCharsets.UTF_8));
        try {
            steps.run();
        } finally {
            System.setErr(err);
        }
        return copy.toString(StandardCharsets.UTF_8);
    }

    /** A tracker with a and b answered (version 1.0.0); b's link, whose closing the tests watch. */
    private FakeTransport.FakeLink aAndBAnswered() {
        tracker(64);
        candidates(a, b);
        answer(a, "1.0.0", "i1");
        answer(b, "1.0.0", "i2");
        return net.firstLinkTo(b.url());
    }

    @Test
    void aLeaverWhoseProbeIsInFlightHasItCancelledAtOnce() {
        tracker(64);
        candidates(a, b);
        answer(a, "1.0.0", "i1"); // b's probe stays in flight
        FakeTransport.FakeLink linkOfB = net.firstLinkTo(b.url());

        candidates(a, c);
        assertThat(linkOfB.closed).as("its probe holds a place among the probes in flight").isTrue();
    }

    @Test
    void discoveryThatNeverAnsweredSaysSoWithItsCause() {
        tracker(64);
        tracker.discoveryFailed(new UncheckedIOException("cannot read the workers file",
                new NoSuchFileException("/etc/rollcall/workers.txt")));
        time.runUntilIdle();
        assertThat(last().discoveryProblem()).contains("discovery has not answered since start-up: "
                + "java.io.UncheckedIOException: cannot read the workers file "
                + "(caused by java.nio.file.NoSuchFileException: /etc/rollcall/workers.txt)");
        assertThat(tracker.discoveryAnswered()).isFalse();
    }

    @Test
    void discoveryFailureKeepsTheLastSetAndMarksItStale() {
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        tracker.discoveryFailed(new IllegalStateException("backend down"));
        time.runUntilIdle();
        assertThat(last().staleSince()).contains(Instant.EPOCH);
        assertThat(last().discoveryProblem())
                .contains("discovery failing since 1970-01-01T00:00:00Z: java.lang.IllegalStateException: backend down");
        assertThat(last().workers()).hasSize(1);

        candidates(a);
        assertThat(last().staleSince()).isEmpty();
        assertThat(last().discoveryProblem()).isEmpty();
    }

    /**
     * Up 200 ms, down 200 ms, 30 times. A worker that drops right after answering keeps its failure
     * count, so each retry waits twice as long as the last: the probes thin out, and with them the
     * snapshots, which change only when a probe answers or a connection drops.
     */
    @Test
    void aFlappingWorkerIsProbedEverMoreRarelyAndCausesNoSnapshotStorm() {
        tracker(64);
        candidates(a, b);
        answer(a, "1.0.0", "a0");
        answer(b, "1.0.0", "b0");
        int snapshotsBefore = published.size();
        long probesBefore = net.sentTo(a.url());
        int flaps = 30;
        long[] probesAt = new long[flaps + 1];
        boolean up = true;
        for (int n = 0; n <= flaps; n++) {
            probesAt[n] = net.sentTo(a.url()) - probesBefore;
            if (n == flaps) {
                break;
            }
            up = !up;
            if (!up) {
                net.links.stream().filter(l -> l.endpoint.equals(a) && l.ready()).forEach(FakeTransport.FakeLink::drop);
            }
            for (int ms = 0; ms < 200; ms++) { // the worker answers (or refuses) within a millisecond
                for (FakeTransport.Probe p : net.unanswered()) {
                    if (up) {
                        p.answer("1.0.0", "a" + n);
                    } else {
                        p.fail();
                    }
                }
                time.advance(Duration.ofMillis(1));
            }
        }
        long probes = probesAt[flaps];
        // Backoff from 100 ms doubling: 100+200+400+800+1600+3200 ms covers the 6 s, so about six
        // retries plus one probe after each answer that was cut off; without damping it is two to
        // three probes per cycle (about 40).
        assertThat(probes).as("probes while flapping").isBetween(6L, 16L);
        assertThat(probesAt[flaps] - probesAt[flaps / 2])
                .as("probes in the second half vs. the first (%s)", Arrays.toString(probesAt))
                .isLessThan(probesAt[flaps / 2]);
        assertThat(published.size() - snapshotsBefore).as("snapshots while flapping")
                .isLessThanOrEqualTo((int) (2 * probes)).isLessThan(flaps);
        assertThat(net.sentTo(b.url())).as("the steady worker was never disturbed").isEqualTo(1);
    }

    @Test
    void aPerWorkerRuleIsAskedOncePerAnswerAndAgainAfterItThrew() {
        Map<String, Integer> asked = new HashMap<>();
        boolean[] broken = {true};
        policy = VersionPolicy.rule(w -> { // declared per worker: verdicts may be remembered per answer
            asked.merge(w.endpoint().url(), 1, Integer::sum);
            if (w.endpoint().equals(b) && broken[0]) {
                throw new IllegalStateException("flaky rule");
            }
            return ONE_OH.check(w);
        });
        tracker(64);
        candidates(a, b, c);
        answer(a, "1.0.0", "i1");
        time.advance(Duration.ofMillis(10)); // c is still in flight: builds are spaced out
        answer(b, "1.0.0", "i2");
        time.advance(Duration.ofMillis(10));
        assertThat(last().status(b.url()).orElseThrow().reason())
                .isEqualTo("policy failed: java.lang.IllegalStateException: flaky rule");
        broken[0] = false;
        answer(c, "2.0.0", "i3");
        assertThat(state(b)).as("a verdict that threw is not remembered").isEqualTo(State.COMPATIBLE);
        assertThat(state(c)).isEqualTo(State.REJECTED);
        assertThat(published.size()).as("builds so far").isGreaterThanOrEqualTo(3);
        assertThat(asked.get(a.url())).as("a's one answer, asked about once over every build").isEqualTo(1);

        FakeTransport.FakeLink link = net.links.stream().filter(l -> l.endpoint.equals(a) && !l.closed).findFirst()
                .orElseThrow();
        link.push("1.0.0", "i1", Map.of("zone", "z"), ServingState.SERVING);
        time.runUntilIdle();
        assertThat(asked.get(a.url())).as("a new answer is asked about again").isEqualTo(2);
    }

    @Test
    void aClosingConnectionHoldsItsProbeSlotUntilItsSocketIsGone() {
        keepChannels = false;
        net.slowClose = true;
        tracker(1);
        candidates(a, b);
        answer(a, "1.0.0", "i1"); // a's channel is closed after its answer; its socket is still closing
        assertThat(net.links.get(0).closed).isTrue();
        assertThat(net.unanswered()).as("b waits: a's socket still counts against the limit of 1").isEmpty();

        net.links.get(0).gone.complete(null);
        time.runUntilIdle();
        assertThat(net.unanswered()).extracting(p -> p.link().endpoint).containsExactly(b);
    }
}
