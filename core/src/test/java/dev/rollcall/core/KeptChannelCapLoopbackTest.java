package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code maxKeptChannels(3)} against ten real workers on loopback: the workers' own servers count
 * the connections and the {@code WatchWorkerInfo} streams the resolver holds; the metrics and the
 * snapshot say how many are past the cap; a worker past it still takes the user's calls.
 */
class KeptChannelCapLoopbackTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private final List<ScriptedWorker> workers = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        for (ScriptedWorker w : workers) {
            w.close();
        }
    }

    @Test
    void tenWorkersWithACapOfThreeHoldThreeConnectionsAndThreeStreams() throws Exception {
        for (int i = 0; i < 10; i++) {
            workers.add(ScriptedWorker.releasing());
        }
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
        try (WorkerResolver resolver = WorkerResolver.builder().name("cap-test").discovery(discovery)
                .policy(w -> Verdict.accept()).fetchSchemas(false).probeTimeout(Duration.ofSeconds(5))
                .maxKeptChannels(3).build()) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new RollcallMetrics(resolver).bindTo(registry);
            resolver.awaitWorkers(10, WAIT);
            resolver.await(s -> s.counts().overKeptCap() == 7, WAIT);

            await().atMost(WAIT).untilAsserted(() -> assertThat(workers.stream()
                    .mapToInt(ScriptedWorker::openConnections).sum())
                    .as("the seven one-off probe connections are closed; the three kept stay").isEqualTo(3));
            assertThat(workers.stream().filter(w -> w.holderIds().size() == 1)).as("one stream each on three")
                    .hasSize(3);
            assertThat(workers.stream().filter(w -> w.holderIds().isEmpty())).as("none on the seven").hasSize(7);
            assertThat(registry.get("rollcall.probe.kept-channels").gauge().value()).isEqualTo(3);
            assertThat(registry.get("rollcall.probe.over-kept-cap").gauge().value()).isEqualTo(7);

            ScriptedWorker uncapped = workers.stream().filter(w -> w.holderIds().isEmpty()).findFirst().orElseThrow();
            var answer = WorkerServiceGrpc.newBlockingStub(resolver.channel(uncapped.endpoint()))
                    .withDeadlineAfter(5, TimeUnit.SECONDS).workerInfo(WorkerInfoRequest.getDefaultInstance());
            assertThat(answer.getInstanceId()).as("a worker past the cap takes the user's calls").isNotEmpty();
        }
    }
}
