package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetEvent;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.protocol.v1.Capability;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A worker on loopback that gains and drops {@code udf:geo_distance} every millisecond on
 * {@code WatchWorkerInfo} (each answer legal on its own), beside nine honest workers of which four
 * have the UDF: snapshots stay within {@code rollcall.publish.max-rate}; every lease that requires
 * the UDF, taken while the flapper flaps, lists only workers that have it in that very snapshot and
 * says of every other compatible worker that it lacks it; and the flapper is damped, as a worker
 * flapping its version is, so that it stops costing listeners snapshots.
 */
class FlappingCapabilityLoopbackTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** How many answers the flapper pushes while the snapshots are counted. */
    private static final int PUSHES = 2_000;
    private static final Requirements GEO = Requirements.of("udf:geo_distance");
    private static final Capability UDF = Capability.newBuilder().setName("udf:geo_distance").build();

    private final List<ScriptedWorker> workers = new ArrayList<>();
    private final ScheduledExecutorService flapping = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() throws InterruptedException {
        flapping.shutdownNow();
        flapping.awaitTermination(5, TimeUnit.SECONDS);
        for (ScriptedWorker w : workers) {
            w.close();
        }
    }

    private ScriptedWorker worker(boolean withUdf) throws Exception {
        WorkerInfoResponse.Builder answer = WorkerInfoResponse.newBuilder().setVersion("1.4.0")
                .setInstanceId("w" + workers.size());
        if (withUdf) {
            answer.addCapabilities(UDF);
        }
        ScriptedWorker w = ScriptedWorker.answering(answer.build());
        workers.add(w);
        return w;
    }

    /** What a lease's narrowed snapshot promises, checked against that same snapshot only. */
    private static void narrowedHonestly(FleetSnapshot narrowed, FleetSnapshot whole) {
        assertThat(narrowed.number()).isEqualTo(whole.number());
        for (WorkerInfo w : narrowed.workers()) {
            assertThat(GEO.isMetBy(w.capabilities())).as("%s in snapshot %d has %s", w.endpoint().url(),
                    narrowed.number(), w.capabilities()).isTrue();
            assertThat(narrowed.status(w.endpoint().url()).orElseThrow().state()).isEqualTo(State.COMPATIBLE);
        }
        for (WorkerStatus s : narrowed.statuses()) {
            if (s.state() == State.LACKS_REQUIREMENT) {
                WorkerInfo info = s.info().orElseThrow();
                assertThat(GEO.isMetBy(info.capabilities())).as("%s said to lack it", s.endpoint().url()).isFalse();
                assertThat(s.reason()).isEqualTo("lacks udf:geo_distance");
            }
        }
        assertThat(narrowed.counts().compatible() + narrowed.counts().lacksRequirement())
                .as("every compatible worker of snapshot %d either meets it or lacks it", whole.number())
                .isEqualTo(whole.counts().compatible());
    }

    @Test
    void aWorkerFlappingACapabilityEveryMillisecondNeverReachesALeaseThatLacksItAndIsDamped() throws Exception {
        ScriptedWorker flapper = worker(true);
        for (int i = 0; i < 9; i++) {
            worker(i < 4);
        }
        Set<WorkerEndpoint> all = workers.stream().map(ScriptedWorker::endpoint).collect(Collectors.toSet());
        Set<String> honest = workers.stream().filter(w -> w != flapper).map(w -> w.endpoint().url())
                .collect(Collectors.toSet());
        WorkerDiscovery discovery = new WorkerDiscovery() {
            @Override
            public void start(CandidateListener listener) {
                listener.onCandidates(all);
            }

            @Override
            public void close() {
            }
        };
        try (WorkerResolver resolver = WorkerResolver.builder().name("flap-capability").discovery(discovery)
                .policy(w -> Verdict.accept()).fetchSchemas(false).probeTimeout(Duration.ofSeconds(5)).build()) {
            resolver.awaitWorkers(10, WAIT);
            List<FleetEvent> events = new CopyOnWriteArrayList<>();
            List<FleetSnapshot> received = new CopyOnWriteArrayList<>();
            resolver.addEventListener(events::add);
            resolver.addListener(received::add);
            long firstNumber = resolver.pin().number();

            AtomicInteger pushed = new AtomicInteger();
            long started = System.nanoTime();
            flapping.scheduleAtFixedRate(() -> flapper.answerCapabilities(
                    pushed.incrementAndGet() % 2 == 1 ? List.of() : List.of(UDF)), 1, 1, TimeUnit.MILLISECONDS);
            int leases = 0;
            while (pushed.get() < PUSHES) {
                try (SnapshotLease lease = resolver.lease(GEO); SnapshotLease whole = resolver.lease()) {
                    if (lease.snapshot().number() == whole.snapshot().number()) {
                        narrowedHonestly(lease.snapshot(), whole.snapshot());
                        leases++;
                    }
                }
            }
            long lastNumber = resolver.pin().number();
            double seconds = (System.nanoTime() - started) / 1e9;
            assertThat(leases).as("leases checked while it flapped").isPositive();

            // A bound on messages, not a speed: 20 a second, with slack for the first and the scheduling.
            long published = lastNumber - firstNumber;
            assertThat(published).as("snapshots published over %.2f s of %d pushes", seconds, pushed.get())
                    .isLessThanOrEqualTo((long) Math.ceil(seconds * 20 * 1.5) + 2);
            for (FleetSnapshot s : received) {
                narrowedHonestly(s.requiring(GEO), s);
                assertThat(s.workers()).extracting(w -> w.endpoint().url()).as("snapshot %d", s.number())
                        .containsAll(honest);
            }

            FleetSnapshot last = resolver.await(s -> s.status(flapper.endpoint().url())
                    .map(FleetEvent.WorkerDamped::shows).orElse(false), WAIT);
            assertThat(last.status(flapper.endpoint().url()).orElseThrow().reason())
                    .startsWith("damped for flapping");
            assertThat(last.workers()).extracting(w -> w.endpoint().url()).containsExactlyInAnyOrderElementsOf(honest);
            try (SnapshotLease lease = resolver.lease(GEO)) {
                assertThat(lease.snapshot().workers()).hasSize(4);
            }
            await().atMost(WAIT).untilAsserted(() -> assertThat(events)
                    .filteredOn(e -> e instanceof FleetEvent.WorkerDamped).hasSize(1));
        }
    }
}
