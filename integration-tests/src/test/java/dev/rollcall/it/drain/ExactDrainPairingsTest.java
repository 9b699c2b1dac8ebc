package dev.rollcall.it.drain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.PlainWorkerServer;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exact drain end to end, each pairing of old and new coordinator and worker, over real gRPC on
 * loopback: a new coordinator ({@code exactDrain(true)}) and a new worker stop exactly when the last
 * lease closes; an old-style coordinator keeps the worker's drain-quiet rule; a worker from before
 * exact drain (ReleaseWorker UNIMPLEMENTED, holder_id ignored) keeps working without a retry storm;
 * of three coordinators the worker waits for the one whose lease is open; a coordinator killed with
 * SIGKILL mid-drain lets go when the kernel ends its connection, not at shutdown-grace.
 */
class ExactDrainPairingsTest {

    private static final Logger log = LoggerFactory.getLogger(ExactDrainPairingsTest.class);
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** Far longer than any wait that should end: a close that reaches it did not end exactly. */
    private static final Duration GRACE = Duration.ofSeconds(60);
    /** Drain-quiet long enough that a close that kept it cannot pass for an exact one. */
    private static final Duration LONG_QUIET = Duration.ofSeconds(30);
    /** How long something that must not happen is given to happen anyway. */
    private static final Duration QUIET = Duration.ofMillis(700);

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closing(T c) {
        open.add(c);
        return c;
    }

    private RollcallWorker worker(Duration drainQuiet) throws java.io.IOException {
        return closing(RollcallWorker.builder().version("1.0.0").shutdownGrace(GRACE).drainQuiet(drainQuiet).start());
    }

    private WorkerResolver coordinator(String name, boolean exact, WorkerEndpoint... workers) {
        PushDiscovery discovery = new PushDiscovery();
        discovery.push(List.of(workers));
        return closing(WorkerResolver.builder().name(name).discovery(discovery).policy(w -> Verdict.accept())
                .fetchSchemas(false).exactDrain(exact).build());
    }

    private static boolean lists(FleetSnapshot s, WorkerEndpoint e) {
        return s.status(e.url()).map(st -> st.state() == WorkerStatus.State.COMPATIBLE).orElse(false);
    }

    /** {@code worker.close()} on a thread of its own; completes with the nanoTime it returned at. */
    private static CompletableFuture<Long> closeAsync(RollcallWorker worker) {
        return CompletableFuture.supplyAsync(() -> {
            worker.close();
            return System.nanoTime();
        });
    }

    @Test
    void newCoordinatorAndNewWorkerCloseWaitsForTheOpenLeaseAndReturnsRightAfterItCloses() throws Exception {
        RollcallWorker worker = worker(LONG_QUIET);
        WorkerResolver resolver = coordinator("exact", true, worker.endpoint());
        resolver.awaitWorkers(1, WAIT);
        await().atMost(WAIT).until(() -> worker.coordinatorsHolding() == 1);
        SnapshotLease lease = resolver.lease();
        long drained = System.nanoTime();
        CompletableFuture<Long> closed = closeAsync(worker);
        resolver.await(s -> !lists(s, worker.endpoint()), WAIT);
        await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> !closed.isDone());
        assertThat(worker.coordinatorsHolding()).as("the coordinator with the open lease").isEqualTo(1);

        long leaseClosed = System.nanoTime();
        lease.close();
        long returned = closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        Duration gap = Duration.ofNanos(returned - leaseClosed);
        log.info("close() returned {} ms after the lease closed ({} ms after the drain)", gap.toMillis(),
                TimeUnit.NANOSECONDS.toMillis(returned - drained));
        assertThat(gap).as("from lease.close() to close() returning").isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void oldStyleCoordinatorAndNewWorkerKeepTheDrainQuietRule() throws Exception {
        Duration quiet = Duration.ofSeconds(2);
        RollcallWorker worker = worker(quiet);
        WorkerResolver resolver = coordinator("old-style", false, worker.endpoint());
        resolver.awaitWorkers(1, WAIT);
        await().atMost(WAIT).until(() -> worker.coordinatorsWatching() == 1);
        assertThat(worker.coordinatorsHolding()).as("a watcher without a holder id holds nothing").isZero();
        try (SnapshotLease lease = resolver.lease()) {
            assertThat(lists(lease.snapshot(), worker.endpoint())).isTrue();
        }
        long start = System.nanoTime();
        worker.close();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("close() after drain-quiet, not before")
                .isGreaterThanOrEqualTo(quiet.minusMillis(100)).isLessThan(GRACE.dividedBy(2));
    }

    @Test
    void newCoordinatorAndOldWorkerKeepWorkingWithoutARetryStorm() throws Exception {
        // A worker from before exact drain: WorkerInfo and WatchWorkerInfo only, holder_id ignored.
        PlainWorkerServer worker = closing(new PlainWorkerServer(WorkerInfoResponse.newBuilder().setVersion("0.9.0")
                .setInstanceId("old-1").build(), null));
        WorkerResolver resolver = coordinator("exact", true, worker.endpoint());
        resolver.awaitWorkers(1, WAIT);
        try (SnapshotLease lease = resolver.lease()) {
            assertThat(lists(lease.snapshot(), worker.endpoint())).isTrue();
        }
        worker.state(ServingState.DRAINING);
        resolver.await(s -> s.counts().draining() == 1, WAIT);
        await().atMost(WAIT).until(() -> worker.releases.get() == 1);
        await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> worker.releases.get() == 1);
        worker.state(ServingState.SERVING);
        resolver.await(s -> lists(s, worker.endpoint()), WAIT);
        assertThat(worker.releases).as("ReleaseWorker calls to the old worker").hasValue(1);
    }

    @Test
    void ofThreeCoordinatorsTheWorkerWaitsForTheOneWhoseLeaseIsOpen() throws Exception {
        RollcallWorker worker = worker(LONG_QUIET);
        WorkerResolver a = coordinator("a", true, worker.endpoint());
        WorkerResolver b = coordinator("b", true, worker.endpoint());
        WorkerResolver c = coordinator("c", true, worker.endpoint());
        for (WorkerResolver r : List.of(a, b, c)) {
            r.awaitWorkers(1, WAIT);
        }
        await().atMost(WAIT).until(() -> worker.coordinatorsHolding() == 3);
        SnapshotLease held = c.lease();
        CompletableFuture<Long> closed = closeAsync(worker);
        await().atMost(WAIT).until(() -> worker.coordinatorsHolding() == 1);
        await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> !closed.isDone()
                && worker.coordinatorsHolding() == 1);
        long leaseClosed = System.nanoTime();
        held.close();
        long returned = closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(returned - leaseClosed)).as("from c's lease.close() to close() returning")
                .isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aCoordinatorKilledMidDrainLetsGoWhenItsConnectionEndsNotAtShutdownGrace() throws Exception {
        RollcallWorker worker = worker(LONG_QUIET);
        Process holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), LeaseHolderProcess.class.getName(),
                String.valueOf(worker.port()))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        closing(holder::destroyForcibly);
        BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> leased = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        assertThat(leased.get(60, TimeUnit.SECONDS)).startsWith("leased");
        await().atMost(WAIT).until(() -> worker.coordinatorsHolding() == 1);

        CompletableFuture<Long> closed = closeAsync(worker);
        await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> !closed.isDone());
        long killed = System.nanoTime();
        holder.destroyForcibly(); // SIGKILL: no goodbye, the kernel closes its sockets
        long returned = closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        Duration gap = Duration.ofNanos(returned - killed);
        log.info("close() returned {} ms after the coordinator was killed", gap.toMillis());
        assertThat(gap).as("from SIGKILL to close() returning").isLessThan(GRACE.dividedBy(4));
        assertThat(holder.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }
}
