package dev.rollcall.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ThreadCensusTest {

    private final CountDownLatch release = new CountDownLatch(1);

    @AfterEach
    void releaseThreads() {
        release.countDown();
    }

    private Thread startParked(String name) {
        Thread t = new Thread(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Test
    void newThreadsAreThoseStartedSinceTheCensusWithTheGivenPrefixes() {
        Thread before = startParked("census-test-old-1");
        ThreadCensus census = ThreadCensus.take();
        startParked("census-test-new-1");
        startParked("census-test-new-2");
        startParked("other-census-test-3");

        assertThat(census.newThreads("census-test-")).containsExactly("census-test-new-1", "census-test-new-2");
        assertThat(census.names("census-test-")).containsExactly(before.getName());
    }

    @Test
    void awaitingNewThreadsEndedFailsNamingTheOneLeftAndWhereItIs() {
        ThreadCensus census = ThreadCensus.take();
        startParked("census-test-left-1");

        assertThatThrownBy(() -> census.awaitNewThreadsEnded(Duration.ofMillis(300), "census-test-"))
                .hasMessageContaining("census-test-left-1")
                .hasMessageContaining("CountDownLatch.await");
    }

    @Test
    void awaitingReturnsOnceTheThreadsEnd() throws Exception {
        ThreadCensus census = ThreadCensus.take();
        Thread t = startParked("census-test-ending-1");

        release.countDown();

        census.awaitNewThreadsEnded(Duration.ofSeconds(10), "census-test-");
        ThreadCensus.awaitNoneAlive(Duration.ofSeconds(10), "census-test-ending-");
        assertThat(t.isAlive()).isFalse();
    }

    @Test
    void countsThreadsByKindWithoutTheirNumbers() {
        startParked("census-kind-pool-1-1");
        startParked("census-kind-pool-1-2");
        startParked("census-kind-single");

        assertThat(ThreadCensus.take().byKind("census-kind-"))
                .containsEntry("census-kind-pool", 2)
                .containsEntry("census-kind-single", 1)
                .hasSize(2);
        assertThat(ThreadCensus.kindOf("rollcall-probe-soak-3")).isEqualTo("rollcall-probe-soak");
        assertThat(ThreadCensus.kindOf("grpc-nio-worker-ELG-1-2")).isEqualTo("grpc-nio-worker-ELG");
    }
}
