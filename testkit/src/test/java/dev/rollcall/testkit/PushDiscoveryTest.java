package dev.rollcall.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PushDiscoveryTest {

    private static final WorkerEndpoint A = WorkerEndpoint.of("127.0.0.1", 7001);
    private static final WorkerEndpoint B = WorkerEndpoint.of("127.0.0.2", 7002);

    @Test
    void deliversEachPushAsTheFullSetOnceStarted() {
        PushDiscovery discovery = new PushDiscovery();
        CandidateRecorder recorder = new CandidateRecorder();
        discovery.start(recorder);

        discovery.push(List.of(A));
        discovery.push(List.of(A, B));
        discovery.fail(new IOException("source down"));

        assertThat(recorder.sets()).containsExactly(Set.of(A), Set.of(A, B));
        assertThat(recorder.errors()).singleElement().satisfies(e -> assertThat(e).hasMessage("source down"));
        assertThat(discovery.urls()).containsExactlyInAnyOrder(A.url(), B.url());
    }

    @Test
    void keepsWhatWasPushedBeforeStartAndDeliversItAtStart() {
        PushDiscovery discovery = new PushDiscovery();
        discovery.push(List.of(A));
        assertThat(discovery.urls()).containsExactly(A.url());
        assertThat(discovery.isStarted()).isFalse();

        CandidateRecorder recorder = new CandidateRecorder();
        discovery.start(recorder);

        assertThat(recorder.sets()).containsExactly(Set.of(A));
        assertThat(discovery.isStarted()).isTrue();
    }

    @Test
    void deliversNothingAfterClose() {
        PushDiscovery discovery = new PushDiscovery("push[test]");
        CandidateRecorder recorder = new CandidateRecorder();
        discovery.start(recorder);

        discovery.close();
        discovery.push(List.of(A));
        discovery.fail(new IOException("late"));

        assertThat(recorder.events()).isEmpty();
        assertThat(discovery.isClosed()).isTrue();
        assertThat(discovery.description()).isEqualTo("push[test]");
    }
}
