package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.protocol.v1.Capability;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.worker.RollcallWorker;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A worker's capabilities as the resolver follows them over real gRPC on loopback: a capability
 * added or dropped reaches the snapshots by the worker's push (a new revision on its watch), with
 * no new probe and no new stream; and a worker that discovery relabels keeps the capabilities it
 * said, as it keeps its version.
 */
class CapabilityPushTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** Longer than the test: whatever changes within it was pushed, not found by a refresh. */
    private static final Duration NO_REFRESH = Duration.ofHours(1);

    /** Discovery that hands the test its listener, so that the test says which candidates there are. */
    private static final class HandedDiscovery implements WorkerDiscovery {
        private final CompletableFuture<CandidateListener> listener = new CompletableFuture<>();

        @Override
        public void start(CandidateListener l) {
            listener.complete(l);
        }

        @Override
        public void close() {
        }

        void offer(WorkerEndpoint... candidates) throws Exception {
            listener.get(5, TimeUnit.SECONDS).onCandidates(Set.of(candidates));
        }
    }

    private static Capability wire(String name, String version) {
        return Capability.newBuilder().setName(name).setVersion(version).build();
    }

    private static WorkerResolver resolver(HandedDiscovery discovery, String name) {
        return WorkerResolver.builder().name(name).discovery(discovery).policy(w -> Verdict.accept())
                .fetchSchemas(false).refreshInterval(NO_REFRESH).probeTimeout(Duration.ofSeconds(5)).build();
    }

    @Test
    void aCapabilityAddedOrDroppedReachesTheSnapshotsByPushWithoutANewProbe() throws Exception {
        HandedDiscovery discovery = new HandedDiscovery();
        try (ScriptedWorker worker = ScriptedWorker.answering(WorkerInfoResponse.newBuilder().setVersion("1.4.0")
                .setInstanceId("pushing").addCapabilities(wire("plan-protocol", "3")).build());
             WorkerResolver resolver = resolver(discovery, "capability-push")) {
            discovery.offer(worker.endpoint());
            FleetSnapshot first = resolver.await(s -> s.workersWith("plan-protocol>=3").size() == 1, WAIT);
            int probes = worker.infoCalls();
            int watches = worker.watchCalls();

            worker.answerCapabilities(List.of(wire("plan-protocol", "3"), wire("udf:geo_distance", "")));
            FleetSnapshot added = resolver.await(s -> s.workersWith("udf:geo_distance").size() == 1, WAIT);
            assertThat(added.number()).isGreaterThan(first.number());
            assertThat(added.workers().get(0).capabilities())
                    .isEqualTo(Capabilities.of("plan-protocol=3", "udf:geo_distance"));

            worker.answerCapabilities(List.of(wire("udf:geo_distance", "")));
            FleetSnapshot dropped = resolver.await(s -> s.workersWith("plan-protocol").isEmpty(), WAIT);
            assertThat(dropped.workers()).extracting(WorkerInfo::capabilities)
                    .containsExactly(Capabilities.of("udf:geo_distance"));

            assertThat(worker.infoCalls()).as("WorkerInfo probes after the first answer").isEqualTo(probes);
            assertThat(worker.watchCalls()).as("watch streams opened after the first answer").isEqualTo(watches);
        }
    }

    @Test
    void aWorkerThatDiscoveryRelabelsKeepsTheCapabilitiesItSaid() throws Exception {
        HandedDiscovery discovery = new HandedDiscovery();
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0")
                .capabilities("udf:geo_distance", "plan-protocol=3").start();
             WorkerResolver resolver = resolver(discovery, "capability-relabel")) {
            discovery.offer(worker.endpoint().withLabels(Map.of("zone", "a")));
            resolver.await(s -> s.workersWith("udf:geo_distance").size() == 1, WAIT);

            discovery.offer(worker.endpoint().withLabels(Map.of("zone", "b")));
            FleetSnapshot relabelled = resolver.await(s -> s.workers().size() == 1
                    && "b".equals(s.workers().get(0).endpoint().labels().get("zone")), WAIT);
            assertThat(relabelled.workers().get(0).capabilities())
                    .isEqualTo(Capabilities.of("udf:geo_distance", "plan-protocol=3"));
            assertThat(relabelled.workersWith("udf:geo_distance", "plan-protocol>=3")).hasSize(1);
        }
    }
}
