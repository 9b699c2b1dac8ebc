package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.worker.RollcallWorker;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Capabilities over real gRPC on loopback, from a real worker's builder to a lease's snapshot: a
 * lease with requirements lists only the compatible workers that meet them and says of each other
 * compatible worker what it lacks; a lease without keeps them all; a capability a worker drops
 * (pushed on its watch stream) leaves the next lease that needs it.
 */
class RequirementsLeaseTest {

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

    private static List<String> urls(FleetSnapshot s) {
        return s.workers().stream().map(w -> w.endpoint().url()).toList();
    }

    @Test
    void aLeaseWithRequirementsListsOnlyTheWorkersThatMeetThemAndSaysWhatTheOthersLack() throws Exception {
        try (RollcallWorker old = RollcallWorker.builder().version("1.4.0").capabilities("plan-protocol=2").start();
             RollcallWorker upgraded = RollcallWorker.builder().version("1.4.0")
                     .capabilities("udf:geo_distance", "plan-protocol=3").start();
             WorkerResolver resolver = WorkerResolver.builder().name("requirements")
                     .discovery(new Fixed(Set.of(old.endpoint(), upgraded.endpoint())))
                     .policy(w -> Verdict.accept()).fetchSchemas(false).probeTimeout(Duration.ofSeconds(5)).build()) {
            resolver.awaitWorkers(2, WAIT);

            try (SnapshotLease lease = resolver.lease(Requirements.of("udf:geo_distance", "plan-protocol>=3"));
                 SnapshotLease any = resolver.lease()) {
                FleetSnapshot narrowed = lease.snapshot();
                assertThat(urls(narrowed)).containsExactly(upgraded.endpoint().url());
                assertThat(narrowed.requirements()).isEqualTo(Requirements.of("udf:geo_distance", "plan-protocol>=3"));
                WorkerStatus left = narrowed.status(old.endpoint().url()).orElseThrow();
                assertThat(left.state()).isEqualTo(State.LACKS_REQUIREMENT);
                assertThat(left.reason()).isEqualTo("lacks udf:geo_distance");
                assertThat(narrowed.counts().compatible()).isEqualTo(1);
                assertThat(narrowed.counts().lacksRequirement()).isEqualTo(1);
                assertThat(narrowed.number()).isEqualTo(any.snapshot().number());
                assertThat(urls(any.snapshot())).hasSize(2);
                WorkerInfo info = narrowed.workers().get(0);
                assertThat(info.capabilities()).isEqualTo(Capabilities.of("plan-protocol=3", "udf:geo_distance"));
            }
            assertThat(resolver.pin().workersWith("plan-protocol>=2")).hasSize(2);
            assertThat(resolver.pin().workersWith("plan-protocol>=3")).extracting(WorkerInfo::endpoint)
                    .containsExactly(upgraded.endpoint());

            upgraded.capabilities(Capabilities.of("plan-protocol=3"));
            resolver.await(s -> s.workersWith("udf:geo_distance").isEmpty(), WAIT);
            try (SnapshotLease lease = resolver.lease(Requirements.of("udf:geo_distance"))) {
                assertThat(lease.snapshot().workers()).isEmpty();
                assertThat(lease.snapshot().status(upgraded.endpoint().url()).orElseThrow().reason())
                        .isEqualTo("lacks udf:geo_distance");
            }
        }
    }
}
