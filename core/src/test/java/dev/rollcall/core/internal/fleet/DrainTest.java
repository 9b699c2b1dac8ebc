package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.probe.FakeTransport;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.Status;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A worker's pushed lifecycle (drain, resume, not serving) as the tracker applies it, in virtual time. */
class DrainTest extends TrackerHarness {

    private FakeTransport.FakeLink linkOf(WorkerEndpoint e) {
        FakeTransport.FakeLink found = null;
        for (FakeTransport.FakeLink l : net.links) {
            if (l.endpoint.equals(e) && !l.closed) {
                found = l;
            }
        }
        return found;
    }

    @Test
    void aDrainPushedOverTheStreamTakesTheWorkerOutAtOnceAndAResumeBringsItBack() {
        tracker(64);
        candidates(a, b);
        answer(a, "1.0.0", "i1");
        answer(b, "1.0.0", "i2");
        assertThat(linkOf(a).streaming()).isTrue();
        int probes = net.sent.size();

        linkOf(a).push("1.0.0", "i1", Map.of(), ServingState.DRAINING);
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.DRAINING);
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(b.url());
        assertThat(last().counts().draining()).isEqualTo(1);

        linkOf(a).push("1.0.0", "i1", Map.of(), ServingState.SERVING);
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        assertThat(net.sent).as("no probe: the news came over the stream").hasSize(probes);
    }

    @Test
    void aWorkerThatStartsNotServingIsNeverUsedUntilItSaysItIsReady() {
        tracker(64);
        candidates(a);
        net.pending(a.url()).answer("1.0.0", "i1", Map.of(), ServingState.NOT_SERVING);
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.NOT_SERVING);
        assertThat(last().workers()).isEmpty();

        linkOf(a).push("1.0.0", "i1", Map.of(), ServingState.SERVING);
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
    }

    @Test
    void aStormOfPushesIsAppliedOnceAsTheNewest() {
        tracker(64);
        candidates(a, b);
        answer(a, "1.0.0", "i1");
        answer(b, "1.0.0", "i2");
        int snapshots = published.size();
        for (int i = 0; i < 1000; i++) { // 1,000 pushes while the resolver's thread is busy
            linkOf(a).push("1.0.0", "i1", Map.of(), i % 2 == 0 ? ServingState.DRAINING : ServingState.SERVING);
        }
        linkOf(a).push("1.0.0", "i1", Map.of(), ServingState.DRAINING);
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.DRAINING);
        assertThat(published.size() - snapshots).as("snapshots for 1,001 pushes").isEqualTo(1);
    }

    @Test
    void labelsChangedAtRunTimeArePublished() {
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        linkOf(a).push("1.0.0", "i1", Map.of("zone", "eu-2"), ServingState.SERVING);
        time.runUntilIdle();
        assertThat(last().workers().get(0).labels()).containsEntry("zone", "eu-2");
    }

    @Test
    void aBrokenStreamIsADroppedConnection() {
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        linkOf(a).drop();
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.PENDING);
        answer(a, "1.0.0", "i2");
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        assertThat(linkOf(a).streaming()).as("watched again after the new answer").isTrue();
    }

    @Test
    void aWorkerWithoutTheStreamIsWatchedByItsConnectionAndRefreshed() {
        net.unaryOnly = true;
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        assertThat(linkOf(a).streaming()).isFalse();
        time.advance(REFRESH);
        assertThat(net.sentTo(a.url())).as("refreshed").isEqualTo(2);
        answer(a, "1.0.0", "i1");
        assertThat(linkOf(a).watches).as("asked for the stream once only").isEqualTo(1);

        linkOf(a).drop();
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.PENDING);
    }

    @Test
    void aMalformedPushIsAFailedProbe() {
        tracker(64);
        candidates(a);
        answer(a, "1.0.0", "i1");
        linkOf(a).stream.listener.answer(new ProbeOutcome.Failed(Status.Code.INTERNAL, "malformed answer: too many labels"));
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.UNREACHABLE);
        assertThat(last().status(a.url()).orElseThrow().reason()).isEqualTo("malformed answer: too many labels");
        time.advance(Duration.ofMillis(91));
        assertThat(net.sentTo(a.url())).as("retried with backoff").isEqualTo(2);
    }

    @Test
    void theProbeIsTheStreamItselfOneCallPerWorker() {
        tracker(1);
        candidates(a, b);
        answer(a, "1.0.0", "i1"); // b starts as a takes no slot any more
        assertThat(linkOf(a).streaming()).as("the probe's stream stays open").isTrue();
        assertThat(net.unanswered()).extracting(p -> p.link().endpoint).containsExactly(b);
        answer(b, "1.0.0", "i2");
        assertThat(linkOf(b).streaming()).isTrue();
        assertThat(linkOf(a).watches + linkOf(b).watches).as("calls: one per worker").isEqualTo(2);
        assertThat(net.sent).as("probes: the streams").hasSize(2);

        linkOf(a).push("1.0.0", "i1", Map.of(), ServingState.DRAINING);
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.DRAINING);
    }

    @Test
    void aStreamThatNeverAnsweredIsAFailedProbeNotAPush() {
        tracker(64);
        candidates(a);
        net.pending(a.url()).result().complete(
                new ProbeOutcome.Failed(Status.Code.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED: no answer within 5000 ms"));
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.UNREACHABLE);
        assertThat(linkOf(a)).as("the link of a failed probe is dropped").isNull();
        time.advance(Duration.ofMillis(91));
        assertThat(net.unanswered()).as("retried with backoff, over a new stream").hasSize(1);
        answer(a, "1.0.0", "i1");
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        assertThat(linkOf(a).streaming()).isTrue();
    }

    @Test
    void theSameAnswerAgainBuildsNoSnapshot() {
        tracker(64);
        candidates(a, b);
        answer(a, "1.0.0", "i1");
        answer(b, "1.0.0", "i2");
        long builds = cpu;
        int published = this.published.size();

        linkOf(a).push("1.0.0", "i1", Map.of(), ServingState.SERVING); // the same answer, pushed again
        time.runUntilIdle();
        assertThat(cpu).as("no build for an answer that changes nothing").isEqualTo(builds);
        assertThat(this.published).hasSize(published);

        linkOf(a).push("1.0.0", "i1", Map.of("zone", "z"), ServingState.SERVING);
        time.runUntilIdle();
        assertThat(this.published).as("a changed answer is built and published").hasSize(published + 1);
    }
}
