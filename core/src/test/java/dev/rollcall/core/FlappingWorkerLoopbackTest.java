package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetEvent;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
 * A worker on loopback that pushes a new answer every millisecond on {@code WatchWorkerInfo},
 * alternating 1.4.0 and 9.9.9 with growing revisions (each answer legal on its own), beside nine
 * honest workers, under a {@code ^1.4.0} rule: the snapshots stay within
 * {@code rollcall.publish.max-rate}, the honest nine are in every one, and the flapper is damped,
 * told once by an event and the meter.
 */
class FlappingWorkerLoopbackTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** How many answers the flapper pushes while the snapshots are counted. */
    private static final int PUSHES = 2_000;
    /** As semver {@code ^1.4.0} judges versions of the form major.minor.patch. */
    private static final VersionPolicy CARET_1_4_0 = w -> {
        String[] v = w.version().split("\\.");
        boolean ok = v.length == 3 && v[0].equals("1") && Integer.parseInt(v[1]) >= 4;
        return ok ? Verdict.accept() : Verdict.reject("version " + w.version() + " does not satisfy ^1.4.0");
    };

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

    @Test
    void aWorkerFlappingEveryMillisecondIsDampedAndSnapshotsStayWithinTheCeiling() throws Exception {
        ScriptedWorker flapper = ScriptedWorker.answering("1.4.0");
        workers.add(flapper);
        for (int i = 0; i < 9; i++) {
            workers.add(ScriptedWorker.answering("1.4.0"));
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
        try (WorkerResolver resolver = WorkerResolver.builder().name("flap-test").discovery(discovery)
                .policy(CARET_1_4_0).fetchSchemas(false).probeTimeout(Duration.ofSeconds(5)).build()) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new RollcallMetrics(resolver).bindTo(registry);
            resolver.awaitWorkers(10, WAIT);
            List<FleetEvent> events = new CopyOnWriteArrayList<>();
            List<FleetSnapshot> received = new CopyOnWriteArrayList<>();
            resolver.addEventListener(events::add);
            resolver.addListener(received::add);
            long firstNumber = resolver.pin().number();

            AtomicInteger pushed = new AtomicInteger();
            long started = System.nanoTime();
            flapping.scheduleAtFixedRate(() -> flapper.answerVersion(
                    pushed.incrementAndGet() % 2 == 1 ? "9.9.9" : "1.4.0"), 1, 1, TimeUnit.MILLISECONDS);
            await().atMost(WAIT).until(() -> pushed.get() >= PUSHES);
            long lastNumber = resolver.pin().number();
            double seconds = (System.nanoTime() - started) / 1e9;

            // A bound on messages, not a speed: 20 a second, with slack for the first and the scheduling.
            long published = lastNumber - firstNumber;
            assertThat(published).as("snapshots published over %.2f s of %d pushes", seconds, pushed.get())
                    .isLessThanOrEqualTo((long) Math.ceil(seconds * 20 * 1.5) + 2);
            FleetSnapshot last = resolver.await(s -> dampedIn(s, flapper), WAIT);
            for (FleetSnapshot s : received) {
                assertThat(s.workers()).extracting(w -> w.endpoint().url()).as("snapshot %d", s.number())
                        .containsAll(honest);
            }
            WorkerStatus status = last.status(flapper.endpoint().url()).orElseThrow();
            assertThat(status.state()).isEqualTo(WorkerStatus.State.REJECTED);
            assertThat(status.reason()).startsWith("damped for flapping").contains("held out until");
            assertThat(last.workers()).extracting(w -> w.endpoint().url()).containsExactlyInAnyOrderElementsOf(honest);

            await().atMost(WAIT).untilAsserted(() -> assertThat(events)
                    .filteredOn(e -> e instanceof FleetEvent.WorkerDamped).hasSize(1));
            assertThat(events).filteredOn(e -> e instanceof FleetEvent.WorkerDamped)
                    .extracting(e -> ((FleetEvent.WorkerDamped) e).endpoint()).containsExactly(flapper.endpoint());
            assertThat(events).filteredOn(e -> e instanceof FleetEvent.WorkerUndamped).isEmpty();
            assertThat(registry.get("rollcall.workers.damped").counter().count()).isEqualTo(1);
        }
    }

    private static boolean dampedIn(FleetSnapshot s, ScriptedWorker w) {
        return s.status(w.endpoint().url()).map(FleetEvent.WorkerDamped::shows).orElse(false);
    }
}
