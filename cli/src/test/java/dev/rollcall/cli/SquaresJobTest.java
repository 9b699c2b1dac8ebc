package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.worker.RollcallWorker;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/** The job's plan and its safety check, against hand-made snapshots. */
class SquaresJobTest {

    @Test
    void plan_splitsTheRangeContiguouslyOnePartitionPerWorker() {
        FleetSnapshot s = snapshot(7, List.of(
                compatible(WorkerEndpoint.of("127.0.0.1", 1), "1.4.0"),
                compatible(WorkerEndpoint.of("127.0.0.1", 2), "1.4.0"),
                compatible(WorkerEndpoint.of("127.0.0.1", 3), "1.5.1")));

        List<SquaresJob.Partition> plan = SquaresJob.plan(s, 10);

        assertThat(plan).extracting(SquaresJob.Partition::from).containsExactly(0L, 4L, 7L);
        assertThat(plan).extracting(SquaresJob.Partition::to).containsExactly(4L, 7L, 10L);
    }

    @Test
    void plan_withoutCompatibleWorkers_failsWithTheCounts() {
        WorkerStatus rejected = new WorkerStatus(WorkerEndpoint.of("127.0.0.1", 1), WorkerStatus.State.REJECTED,
                "version '2.0.0' is outside ^1.4.0", Optional.of(WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 1), "2.0.0")));

        assertThatThrownBy(() -> SquaresJob.plan(snapshot(3, List.of(rejected)), 10))
                .isInstanceOf(DemoFailure.class)
                .hasMessageContaining("snapshot 3 has no compatible worker")
                .hasMessageContaining("1 rejected by version");
    }

    @Test
    void run_whenTheDataComesFromAnotherVersion_failsAsAMixedVersionJob() throws Exception {
        try (RootAllocator root = new RootAllocator();
             PartitionProducer producer = new PartitionProducer("1.4.0", root.newChildAllocator("p", 0, Long.MAX_VALUE));
             RollcallWorker worker = RollcallWorker.builder().version("1.4.0").flightProducer(producer).start();
             SquaresJob job = new SquaresJob(root.newChildAllocator("c", 0, Long.MAX_VALUE), 2)) {
            // The snapshot believes the worker is 1.5.1: e.g. it restarted with another version
            // after the snapshot was taken.
            FleetSnapshot stale = snapshot(9, List.of(compatible(worker.endpoint(), "1.5.1")));

            assertThatThrownBy(() -> job.run(stale, 1_000))
                    .isInstanceOf(DemoFailure.class)
                    .hasMessageContaining("mixed-version job: snapshot 9 planned " + worker.endpoint().url()
                            + " as version 1.5.1, but the data came from version 1.4.0");

            SquaresJob.Result ok = job.run(snapshot(10, List.of(compatible(worker.endpoint(), "1.4.0"))), 1_000);
            assertThat(ok.correct()).isTrue();
            assertThat(ok.summary()).isEqualTo("job on snapshot 10: 1 worker, versions {1.4.0=1}, sum of squares"
                    + " 0..999 = 332833500 (correct)");
        }
    }

    private static WorkerStatus compatible(WorkerEndpoint e, String version) {
        return new WorkerStatus(e, WorkerStatus.State.COMPATIBLE, "", Optional.of(WorkerInfo.of(e, version)));
    }

    /** A snapshot with exactly these statuses. */
    private static FleetSnapshot snapshot(long number, List<WorkerStatus> statuses) {
        return FleetSnapshot.builder(number).publishedAt(Instant.EPOCH).policy("semver ^1.4.0").statuses(statuses).build();
    }
}
