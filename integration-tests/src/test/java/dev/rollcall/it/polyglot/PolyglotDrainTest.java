package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.it.polyglot.ReferenceWorker.Language;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGTERM to a Node or a Python worker, as a rolling restart sends it, while a coordinator plans jobs
 * on fresh snapshots all the time: the worker pushes DRAINING over its WatchWorkerInfo stream, so it
 * is out of new snapshots before it stops (by push: no probe, and its state is DRAINING, not a lost
 * connection), no job planned after that is sent to it, and the jobs planned before still reach it
 * while it waits its quiet time. A job here is a real call to the worker the plan chose (the reference
 * workers serve nothing else than WorkerService, so it is a WorkerInfo call).
 */
class PolyglotDrainTest {

    private static final Logger log = LoggerFactory.getLogger(PolyglotDrainTest.class);
    private static final Duration WAIT = Duration.ofSeconds(20);

    @AutoClose
    private final Closer closer = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    /** A job: planned on snapshot {@code snapshot} for {@code target}; whether the call succeeded. */
    private record Job(long snapshot, WorkerEndpoint target, boolean served) {
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void sigtermTakesTheWorkerOutOfNewSnapshotsByPushAndNoJobPlannedAfterwardsIsSentThere(Language language)
            throws Exception {
        ReferenceWorker worker = closer.add(ReferenceWorker.start(language, "1.0.0", "--drain-quiet-ms", "1500"));
        RollcallWorker other = closer.add(RollcallWorker.builder().version("1.0.0").start());
        WorkerResolver r = closer.add(WorkerResolver.builder().discovery(discovery).policy(SemverRangePolicy.of("^1.0"))
                .refreshInterval(Duration.ofHours(1)).fetchSchemas(false).build());
        discovery.push(List.of(worker.endpoint(), other.endpoint()));
        r.awaitWorkers(2, WAIT);

        List<Job> jobs = new CopyOnWriteArrayList<>();
        Map<WorkerEndpoint, ManagedChannel> channels = new ConcurrentHashMap<>();
        closer.add(() -> channels.values().forEach(ManagedChannel::shutdownNow));
        AtomicLong next = new AtomicLong();
        ScheduledExecutorService planner = Executors.newSingleThreadScheduledExecutor(
                runnable -> new Thread(runnable, "polyglot-drain-planner"));
        closer.add(planner::shutdownNow);
        // Every 5 ms a job, planned on the snapshot current then, round robin over its workers.
        planner.scheduleAtFixedRate(() -> {
            FleetSnapshot plan = r.pin();
            List<WorkerInfo> workers = plan.workers();
            if (workers.isEmpty()) {
                return;
            }
            WorkerEndpoint target = workers.get((int) (next.getAndIncrement() % workers.size())).endpoint();
            ManagedChannel channel = channels.computeIfAbsent(target,
                    t -> NettyChannelBuilder.forAddress(t.host(), t.port()).usePlaintext().build());
            boolean served;
            try {
                WorkerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(2, TimeUnit.SECONDS)
                        .workerInfo(WorkerInfoRequest.getDefaultInstance());
                served = true;
            } catch (RuntimeException e) {
                served = false;
            }
            jobs.add(new Job(plan.number(), target, served));
        }, 0, 5, TimeUnit.MILLISECONDS);
        await().atMost(WAIT).until(() -> jobs.stream().filter(j -> j.target().equals(worker.endpoint())).count() >= 5);
        long probes = r.probesSent();

        long signalled = worker.terminate();
        FleetSnapshot out = r.await(s -> s.workers().stream().noneMatch(w -> w.endpoint().equals(worker.endpoint())), WAIT);
        long pushMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - signalled);
        log.info("MEASURED {} worker: SIGTERM -> a snapshot without it: {} ms", language, pushMillis);

        assertThat(out.status(worker.endpoint().url()).orElseThrow().state()).as("told by push, not by its exit")
                .isEqualTo(State.DRAINING);
        assertThat(r.probesSent()).as("no probe: the drain was pushed").isEqualTo(probes);
        assertThat(worker.isAlive()).as("it is still up, in its quiet time").isTrue();
        assertThat(worker.awaitExit(WAIT)).as("exit code; output:%n%s", worker.output()).isZero();
        long afterExit = jobs.size();
        await().atMost(WAIT).until(() -> jobs.size() >= afterExit + 20);
        planner.shutdown(); // not shutdownNow: an interrupt would fail the job in flight
        assertThat(planner.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

        assertThat(jobs).filteredOn(j -> j.snapshot() >= out.number())
                .as("jobs planned on a snapshot from the drain on").isNotEmpty()
                .allSatisfy(j -> assertThat(j.target()).isEqualTo(other.endpoint()));
        assertThat(jobs).as("every job was served: those planned before the drain reached the worker before it stopped")
                .allMatch(Job::served);
        assertThat(worker.output()).contains("state DRAINING").contains("stopped");
    }
}
