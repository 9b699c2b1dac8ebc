package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.probe.FakeTransport;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Pushed answers never go back in time: of two answers of one worker process, the one with the
 * lower revision is the older, whichever arrives last. Virtual time, fake transport.
 */
class RevisionOrderTest extends TrackerHarness {

    private FakeTransport.FakeLink linkOf(WorkerEndpoint e) {
        FakeTransport.FakeLink found = null;
        for (FakeTransport.FakeLink l : net.links) {
            if (l.endpoint.equals(e) && !l.closed) {
                found = l;
            }
        }
        return found;
    }

    /** A probe that starts now, over the open stream's connection: a unary call, answered by hand. */
    private FakeTransport.Probe unaryProbe(WorkerEndpoint e) {
        tracker.calls().verify(e.url(), new CompletableFuture<>());
        time.runUntilIdle();
        FakeTransport.Probe unary = net.pending(e.url());
        assertThat(unary.listener()).as("a unary call: the stream is open already").isNull();
        return unary;
    }

    @Test
    void anAnswerOvertakenByANewerPushOfTheSameInstanceIsDropped() {
        tracker(64);
        candidates(a);
        net.pending(a.url()).answer("1.0.0", "i1", Map.of(), ServingState.SERVING, 1);
        time.runUntilIdle();
        FakeTransport.Probe sentBeforeTheDrain = unaryProbe(a);

        linkOf(a).push("1.0.0", "i1", Map.of(), ServingState.DRAINING, 2);
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.DRAINING);
        int snapshots = published.size();

        // Answered before the drain, delivered after it: the worker is draining, whatever it says.
        sentBeforeTheDrain.answer("1.0.0", "i1", Map.of(), ServingState.SERVING, 1);
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.DRAINING);
        assertThat(last().workers()).isEmpty();
        assertThat(published).as("nothing changed").hasSize(snapshots);

        linkOf(a).push("1.0.0", "i1", Map.of(), ServingState.SERVING, 3); // a real resume
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
    }

    @Test
    void anOvertakenAnswerStillProvesAReachableWorkerAndTheNewerAnswerStands() {
        tracker(64);
        candidates(a);
        net.pending(a.url()).answer("1.0.0", "i1", Map.of("zone", "eu-1"), ServingState.SERVING, 4);
        time.runUntilIdle();
        tracker.calls().callFailed(a.url(), "UNAVAILABLE: reset"); // out until its re-probe answers
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.PENDING);

        net.pending(a.url()).answer("1.0.0", "i1", Map.of("zone", "eu-0"), ServingState.SERVING, 3);
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        assertThat(last().workers().get(0).labels()).as("revision 4's labels, not 3's").containsEntry("zone", "eu-1");
    }

    @Test
    void answersWithoutARevisionAreTakenInTheOrderTheyArrive() {
        tracker(64);
        candidates(a);
        net.pending(a.url()).answer("1.0.0", "i1", Map.of(), ServingState.SERVING, 0);
        time.runUntilIdle();
        FakeTransport.Probe unary = unaryProbe(a);
        linkOf(a).push("1.0.0", "i1", Map.of(), ServingState.DRAINING, 0);
        time.runUntilIdle();
        unary.answer("1.0.0", "i1", Map.of(), ServingState.SERVING, 0);
        time.runUntilIdle();
        assertThat(state(a)).as("an old worker: the last to arrive wins").isEqualTo(State.COMPATIBLE);
    }

    @Test
    void revisionsCompareOnlyWithinOneInstance() {
        tracker(64);
        candidates(a);
        net.pending(a.url()).answer("1.0.0", "i1", Map.of(), ServingState.SERVING, 40);
        time.runUntilIdle();
        FakeTransport.Probe unary = unaryProbe(a);
        // The worker restarted in place: the new process counts from 1 again.
        unary.answer("2.0.0", "i2", Map.of(), ServingState.SERVING, 1);
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.REJECTED);
        assertThat(last().status(a.url()).orElseThrow().info().orElseThrow().instanceId()).isEqualTo("i2");
    }

    @Test
    void theHighestRevisionIsKeptWhenAnAnswerWithoutOneComesBetween() {
        tracker(64);
        candidates(a);
        net.pending(a.url()).answer("1.0.0", "i1", Map.of(), ServingState.SERVING, 5);
        time.runUntilIdle();
        FakeTransport.Probe unary = unaryProbe(a);
        linkOf(a).push("1.0.0", "i1", Map.of(), ServingState.DRAINING, 0); // no revision: taken
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.DRAINING);
        unary.answer("1.0.0", "i1", Map.of(), ServingState.SERVING, 4); // below 5: overtaken
        time.runUntilIdle();
        assertThat(state(a)).isEqualTo(State.DRAINING);
    }
}
