package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.worker.RollcallWorker;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A draining worker's count of holders ({@code WorkerInfoResponse.holders}) reaches the snapshot
 * ({@link WorkerStatus#holders()}), over real gRPC on loopback with real workers: each release is a
 * new revision pushed, so a new snapshot shows it; a worker that does not drain shows none.
 */
class DrainHoldersInSnapshotTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private record Fixed(Set<WorkerEndpoint> endpoints) implements WorkerDiscovery {
        @Override
        public void start(CandidateListener l) {
            l.onCandidates(endpoints);
        }

        @Override
        public void close() {
        }
    }

    private static WorkerResolver resolver(boolean exact, WorkerEndpoint... endpoints) {
        return WorkerResolver.builder().name(exact ? "holding" : "watching").discovery(new Fixed(Set.of(endpoints)))
                .policy(w -> Verdict.accept()).fetchSchemas(false).probeTimeout(Duration.ofSeconds(5))
                .exactDrain(exact).build();
    }

    private static RollcallWorker worker() throws java.io.IOException {
        // drained, it keeps serving until close(): short drain-quiet, so that close() does not wait out the watcher's
        return RollcallWorker.builder().version("1.0.0").shutdownGrace(Duration.ofSeconds(30))
                .drainQuiet(Duration.ofMillis(200)).start();
    }

    private static WorkerStatus status(FleetSnapshot s, RollcallWorker w) {
        return s.status(w.endpoint().url()).orElseThrow();
    }

    @Test
    void aDrainingWorkerShowsItsHoldersAndEachReleaseIsANewSnapshot() throws Exception {
        try (RollcallWorker draining = worker(); RollcallWorker serving = worker();
             WorkerResolver holding = resolver(true, draining.endpoint(), serving.endpoint());
             WorkerResolver watching = resolver(false, draining.endpoint(), serving.endpoint())) {
            holding.awaitWorkers(2, WAIT);
            watching.awaitWorkers(2, WAIT);
            assertThat(status(holding.pin(), draining).holders()).as("not draining: no count").isEmpty();
            await().atMost(WAIT).until(() -> draining.coordinatorsHolding() == 1); // the holding resolver's stream
            try (SnapshotLease lease = holding.lease()) {
                draining.drain();
                FleetSnapshot held = watching.await(s -> status(s, draining).state() == State.DRAINING
                        && status(s, draining).holders().equals(OptionalInt.of(1)), WAIT);
                assertThat(draining.coordinatorsHolding()).isEqualTo(1);
                assertThat(status(held, serving).holders()).as("a worker that serves").isEmpty();
                assertThat(status(holding.await(s -> status(s, draining).holders().equals(OptionalInt.of(1)), WAIT),
                        draining).state()).isEqualTo(State.DRAINING);
                assertThat(lease.snapshot().status(draining.endpoint().url()).orElseThrow().state())
                        .as("the lease's snapshot still lists it").isEqualTo(State.COMPATIBLE);
            }
            FleetSnapshot released = watching.await(s -> status(s, draining).holders().equals(OptionalInt.of(0)), WAIT);
            assertThat(status(released, draining).state()).isEqualTo(State.DRAINING);
            assertThat(draining.coordinatorsHolding()).isZero();
            assertThat(status(holding.await(s -> status(s, draining).holders().equals(OptionalInt.of(0)), WAIT),
                    draining).state()).isEqualTo(State.DRAINING);
            assertThat(status(released, serving).holders()).isEmpty();
        }
    }
}
