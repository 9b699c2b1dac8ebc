package com.example.udf;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.example.udf.GeoQuery.Outcome;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Result;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * "Rolling out a UDF without a version bump" (docs/rolling-out-a-udf.md) with real workers on
 * loopback and real Flight calls, running the page's own code ({@link GeoWorker}, {@link GeoQuery}):
 * old workers of 1.4.0 without the UDF are replaced one by one by new workers of the same 1.4.0
 * that register {@code udf:geo_distance}, while jobs that need it and jobs that do not run all the
 * time. Every worker's engine records each fragment it ran, so "no job landed on a worker without the
 * UDF" is what the workers saw, not what the coordinator believed.
 */
class UdfRolloutStoryTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String GEO = "geo_distance";
    private static final String SCAN = "scan";
    private static final int OLD_WORKERS = 3;

    /** One fragment a worker's engine ran: the job kind, the snapshot its query planned on, whether it had the UDF. */
    private record Ran(String kind, long snapshot, boolean hadGeoDistance) {
    }

    /** A worker's query engine: runs fragments as Flight actions and refuses geo_distance unless registered. */
    private static final class Engine extends NoOpFlightProducer {
        final List<Ran> ran = new CopyOnWriteArrayList<>();
        volatile boolean hasGeoDistance;

        @Override
        public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
            boolean has = hasGeoDistance;
            ran.add(new Ran(action.getType(), Long.parseLong(new String(action.getBody(), UTF_8)), has));
            if (action.getType().equals(GEO) && !has) {
                listener.onError(CallStatus.NOT_FOUND.withDescription("unknown function geo_distance").toRuntimeException());
                return;
            }
            listener.onNext(new Result(action.getType().getBytes(UTF_8)));
            listener.onCompleted();
        }
    }

    /** Jobs that threw: none may, and a wait for a job ends at the first one, with it as the cause. */
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();

    private static Set<WorkerEndpoint> endpoints(Outcome o) {
        return o.ranOn().stream().map(WorkerInfo::endpoint).collect(Collectors.toSet());
    }

    @Test
    void jobsNeedingTheUdfRunOnlyOnWorkersThatRegisteredItAndTheOthersKeepEveryCompatibleWorker() throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        List<RollcallWorker> running = new ArrayList<>();
        List<Outcome> geoJobs = new CopyOnWriteArrayList<>();
        List<Outcome> scanJobs = new CopyOnWriteArrayList<>();
        ScheduledExecutorService jobs = Executors.newScheduledThreadPool(2);
        Engine[] oldEngines = new Engine[OLD_WORKERS];
        Engine[] newEngines = new Engine[OLD_WORKERS];
        RollcallWorker[] old = new RollcallWorker[OLD_WORKERS];
        RollcallWorker[] upgraded = new RollcallWorker[OLD_WORKERS];
        Engine behindEngine = new Engine();
        try (BufferAllocator allocator = new RootAllocator();
             WorkerResolver resolver = WorkerResolver.builder().name("udf-story")
                     .config(RollcallConfig.of(Map.of(
                             "rollcall.policy.type", "capabilities",
                             "rollcall.policy.capabilities.baseline", "plan-protocol>=3",
                             "rollcall.policy.capabilities.range", "^1.4")))
                     .discovery(discovery).exactDrain(true).fetchSchemas(false)
                     .backoff(Duration.ofMillis(20), Duration.ofMillis(200)).build()) {
            for (int i = 0; i < OLD_WORKERS; i++) {
                oldEngines[i] = new Engine();
                newEngines[i] = new Engine();
                old[i] = RollcallWorker.builder().version("1.4.0").capabilities("plan-protocol=3")
                        .flightProducer(oldEngines[i]).start();
                running.add(old[i]);
            }
            // A worker still on the previous plan protocol: the policy's baseline keeps every query off it.
            RollcallWorker behind = RollcallWorker.builder().version("1.4.0").capabilities("plan-protocol=2")
                    .flightProducer(behindEngine).start();
            running.add(behind);
            discovery.push(running.stream().map(RollcallWorker::endpoint).toList());
            FleetSnapshot start = resolver.await(s -> s.counts().compatible() == OLD_WORKERS
                    && stateOf(s, behind) == State.REJECTED, WAIT);
            assertThat(start.policy()).isEqualTo("capabilities plan-protocol>=3 within semver ^1.4");
            assertThat(start.status(behind.endpoint().url()).orElseThrow().reason())
                    .isEqualTo("lacks plan-protocol>=3 (has plan-protocol=2)");

            GeoQuery.Fragment geo = fragment(resolver, allocator, GEO);
            GeoQuery.Fragment scan = fragment(resolver, allocator, SCAN);
            jobs.scheduleWithFixedDelay(() -> runJob(() -> geoJobs.add(GeoQuery.run(resolver, GeoQuery.NEEDS_GEO, geo))),
                    0, 5, TimeUnit.MILLISECONDS);
            jobs.scheduleWithFixedDelay(() -> runJob(() -> scanJobs.add(GeoQuery.run(resolver, Requirements.none(), scan))),
                    0, 5, TimeUnit.MILLISECONDS);

            // Before any new worker: the job that needs the UDF says so, up front, naming what each worker lacks.
            Outcome nowhere = awaitJob(geoJobs, o -> o.notRun().isPresent());
            assertThat(nowhere.notRun().orElseThrow())
                    .startsWith("no worker meets udf:geo_distance; 3 compatible workers lack it (")
                    .contains(old[0].endpoint().url() + ": lacks udf:geo_distance")
                    .doesNotContain(behind.endpoint().url());
            awaitJob(scanJobs, o -> endpoints(o).equals(endpointsOf(old)));

            long firstWithUdf = 0;
            for (int i = 0; i < OLD_WORKERS; i++) {
                newEngines[i].hasGeoDistance = true; // the engine registers the UDF, then the worker starts saying so
                upgraded[i] = GeoWorker.start(newEngines[i]);
                running.add(upgraded[i]);
                discovery.push(running.stream().map(RollcallWorker::endpoint).toList());
                WorkerEndpoint added = upgraded[i].endpoint();
                FleetSnapshot withIt = resolver.await(s -> s.workersWith(GeoQuery.NEEDS_GEO).stream()
                        .anyMatch(w -> w.endpoint().equals(added)), WAIT);
                if (i == 0) {
                    firstWithUdf = withIt.number();
                }
                long since = withIt.number();
                awaitJob(geoJobs, o -> o.snapshot() >= since && endpoints(o).contains(added));
                Set<WorkerEndpoint> compatible = running.stream().filter(w -> w != behind)
                        .map(RollcallWorker::endpoint).collect(Collectors.toSet());
                awaitJob(scanJobs, o -> o.snapshot() >= since && endpoints(o).equals(compatible));

                old[i].drain();
                old[i].close(); // exact drain: returns once no lease still plans on it
                running.remove(old[i]);
                discovery.push(running.stream().map(RollcallWorker::endpoint).toList());
            }

            // A worker withdraws the UDF at run time (pushed): the next lease that needs it leaves it out.
            RollcallWorker withdrawing = upgraded[0];
            GeoWorker.withdrawGeoDistance(withdrawing);
            FleetSnapshot withdrawn = resolver.await(s -> s.workersWith(GeoQuery.NEEDS_GEO).size() == OLD_WORKERS - 1
                    && s.workers().stream().anyMatch(w -> w.endpoint().equals(withdrawing.endpoint())), WAIT);
            try (SnapshotLease lease = resolver.lease(GeoQuery.NEEDS_GEO)) {
                assertThat(lease.snapshot().workers()).extracting(WorkerInfo::endpoint)
                        .containsExactlyInAnyOrder(upgraded[1].endpoint(), upgraded[2].endpoint());
                WorkerStatus left = lease.snapshot().status(withdrawing.endpoint().url()).orElseThrow();
                assertThat(left.state()).isEqualTo(State.LACKS_REQUIREMENT);
                assertThat(left.reason()).isEqualTo("lacks udf:geo_distance");
            }
            awaitJob(geoJobs, o -> o.snapshot() >= withdrawn.number() && o.notRun().isEmpty());
            awaitJob(scanJobs, o -> o.snapshot() >= withdrawn.number()
                    && endpoints(o).contains(withdrawing.endpoint()));

            jobs.shutdown();
            assertThat(jobs.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            assertThat(failures).as("jobs that failed").isEmpty();

            // From the first new worker on, a job needing the UDF always runs: none ran nowhere after
            // the first that ran, nor on a snapshot that already listed a worker with the UDF.
            long firstRan = geoJobs.stream().filter(o -> o.notRun().isEmpty()).mapToLong(Outcome::snapshot).min()
                    .orElseThrow();
            long firstSeenWithUdf = firstWithUdf;
            assertThat(geoJobs).filteredOn(o -> o.notRun().isPresent()).isNotEmpty().allSatisfy(o ->
                    assertThat(o.snapshot()).as("snapshot of a job that ran nowhere")
                            .isLessThan(Math.min(firstRan, firstSeenWithUdf)));
            assertThat(geoJobs).allSatisfy(o -> {
                assertThat(endpoints(o)).as("workers of the UDF job on snapshot %d", o.snapshot())
                        .isSubsetOf(endpointsOf(upgraded));
                if (o.snapshot() >= withdrawn.number()) {
                    assertThat(endpoints(o)).doesNotContain(withdrawing.endpoint());
                }
            });
            assertThat(scanJobs).allSatisfy(o -> assertThat(endpoints(o)).doesNotContain(behind.endpoint()));
            // What the workers saw: no geo_distance fragment on a worker without it, none at all on the one behind.
            for (Engine engine : oldEngines) {
                assertThat(engine.ran).extracting(Ran::kind).contains(SCAN).doesNotContain(GEO);
            }
            assertThat(behindEngine.ran).isEmpty();
            for (Engine engine : newEngines) {
                assertThat(engine.ran).filteredOn(r -> r.kind().equals(GEO)).isNotEmpty()
                        .allSatisfy(r -> assertThat(r.hadGeoDistance()).isTrue());
            }
            assertThat(newEngines[0].ran).filteredOn(r -> r.kind().equals(GEO))
                    .allSatisfy(r -> assertThat(r.snapshot()).isLessThan(withdrawn.number()));
        } finally {
            jobs.shutdownNow();
            for (RollcallWorker worker : running) {
                worker.close();
            }
        }
    }

    /** One fragment as a real Flight action on the worker, over the resolver's connection to it. */
    private static GeoQuery.Fragment fragment(WorkerResolver resolver, BufferAllocator allocator, String kind) {
        return (worker, snapshot) -> {
            try (FlightClient client = FlightGrpcUtils.createFlightClientWithSharedChannel(allocator,
                    resolver.channel(worker.endpoint()))) {
                Iterator<Result> results = client.doAction(new Action(kind, Long.toString(snapshot).getBytes(UTF_8)));
                results.forEachRemaining(r -> { });
            }
        };
    }

    private interface Job {
        void run() throws Exception;
    }

    private void runJob(Job job) {
        try {
            job.run();
        } catch (Exception | AssertionError e) {
            failures.add(e);
        }
    }

    private Outcome awaitJob(List<Outcome> jobs, Predicate<Outcome> condition) {
        await().atMost(WAIT).until(() -> {
            if (!failures.isEmpty()) {
                throw new AssertionError("a job failed", failures.get(0));
            }
            return jobs.stream().anyMatch(condition);
        });
        return jobs.stream().filter(condition).findFirst().orElseThrow();
    }

    private static Set<WorkerEndpoint> endpointsOf(RollcallWorker[] workers) {
        return Arrays.stream(workers).map(RollcallWorker::endpoint).collect(Collectors.toSet());
    }

    private static State stateOf(FleetSnapshot snapshot, RollcallWorker worker) {
        return snapshot.status(worker.endpoint().url()).map(WorkerStatus::state).orElse(null);
    }
}
