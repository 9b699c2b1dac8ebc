package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.KeyRouting;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code subsetSize(3)} against ten real workers on loopback: the workers' own servers count the
 * connections and {@code WatchWorkerInfo} streams the resolver holds (three), the snapshot lists
 * three workers and shows the other seven {@code OUTSIDE_SUBSET}; when a member stops, the next in
 * rank enters the subset and holds a kept channel of its own.
 */
class SubsetLoopbackTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String ID = "loopback-coordinator";
    private final List<ScriptedWorker> workers = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        for (ScriptedWorker w : workers) {
            w.close();
        }
    }

    private static Set<String> urls(FleetSnapshot s) {
        return s.workers().stream().map(w -> w.endpoint().url()).collect(Collectors.toSet());
    }

    private static Set<String> urls(List<ScriptedWorker> ws) {
        return ws.stream().map(w -> w.endpoint().url()).collect(Collectors.toSet());
    }

    private static State state(FleetSnapshot s, ScriptedWorker w) {
        return s.status(w.endpoint().url()).map(WorkerStatus::state).orElseThrow();
    }

    @Test
    void tenWorkersWithASubsetOfThreeHoldThreeConnectionsAndTheNextInRankEntersWhenAMemberStops()
            throws Exception {
        for (int i = 0; i < 10; i++) {
            workers.add(ScriptedWorker.releasing());
        }
        List<ScriptedWorker> byRank = new ArrayList<>(workers);
        byRank.sort((x, y) -> Long.compareUnsigned(KeyRouting.weight(ID, y.endpoint().url()),
                KeyRouting.weight(ID, x.endpoint().url())));
        Set<WorkerEndpoint> all = workers.stream().map(ScriptedWorker::endpoint).collect(Collectors.toSet());
        WorkerDiscovery discovery = new WorkerDiscovery() {
            @Override
            public void start(CandidateListener listener) {
                listener.onCandidates(all);
            }

            @Override
            public void close() {
            }
        };
        try (WorkerResolver resolver = WorkerResolver.builder().name("subset-test").discovery(discovery)
                .policy(w -> Verdict.accept()).fetchSchemas(false).probeTimeout(Duration.ofSeconds(5))
                .subsetSize(3).coordinatorId(ID).build()) {
            FleetSnapshot converged = resolver.await(s -> s.counts().outsideSubset() == 7
                    && s.counts().compatible() == 3, WAIT);

            assertThat(urls(converged)).isEqualTo(urls(byRank.subList(0, 3)));
            assertThat(resolver.workers()).hasSize(3);
            for (ScriptedWorker w : byRank.subList(3, 10)) {
                assertThat(state(converged, w)).isEqualTo(State.OUTSIDE_SUBSET);
            }
            await().atMost(WAIT).untilAsserted(() -> assertThat(workers.stream()
                    .mapToInt(ScriptedWorker::openConnections).sum())
                    .as("the seven one-off probe connections are closed; the three kept stay").isEqualTo(3));
            assertThat(byRank.subList(0, 3)).as("one stream each on the three").allMatch(w -> w.openWatches() == 1);
            assertThat(byRank.subList(3, 10)).as("none on the seven").allMatch(w -> w.openWatches() == 0);

            ScriptedWorker stopped = byRank.get(1);
            ScriptedWorker fourth = byRank.get(3);
            stopped.close();
            FleetSnapshot after = resolver.await(s -> s.counts().compatible() == 3
                    && state(s, fourth) == State.COMPATIBLE, WAIT);

            assertThat(urls(after)).isEqualTo(Set.of(byRank.get(0).endpoint().url(), byRank.get(2).endpoint().url(),
                    fourth.endpoint().url()));
            assertThat(state(after, stopped)).isIn(State.PENDING, State.UNREACHABLE);
            assertThat(after.counts().outsideSubset()).isEqualTo(6);
            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(fourth.openWatches()).as("the fourth, promoted, holds a stream").isEqualTo(1);
                assertThat(fourth.openConnections()).isEqualTo(1);
            });
            assertThat(resolver.probes().keptChannels()).isEqualTo(3);
        }
    }
}
