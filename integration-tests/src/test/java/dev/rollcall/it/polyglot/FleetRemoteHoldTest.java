package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.server.FleetServer;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exact drain for a coordinator that is not a JVM: the Python fleet client's {@code query} holds the
 * current snapshot over {@code HoldFleet} on a {@link FleetServer} whose resolver drains exactly
 * ({@code rollcall.drain.exact=true}). A draining {@link RollcallWorker}'s {@code close()} waits while
 * the hold is open, however long its drain-quiet and grace, and returns right after the hold ends,
 * whether the client ends it or dies with SIGKILL (its connection goes with it).
 */
class FleetRemoteHoldTest {

    private static final Logger log = LoggerFactory.getLogger(FleetRemoteHoldTest.class);
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** Far longer than any wait that should end: a close that reached it did not end exactly. */
    private static final Duration GRACE = Duration.ofSeconds(120);
    /** How long something that must not happen is given to happen anyway. */
    private static final Duration QUIET = Duration.ofMillis(700);

    @AutoClose
    private final Closer closer = new Closer();
    private RollcallWorker worker;
    private WorkerResolver resolver;
    private FleetServer server;

    @BeforeEach
    void serveOneWorkerWithExactDrain() throws Exception {
        worker = closer.add(RollcallWorker.builder().version("1.0.0").shutdownGrace(GRACE).drainQuiet(GRACE).start());
        PushDiscovery discovery = new PushDiscovery();
        discovery.push(List.of(worker.endpoint()));
        resolver = closer.add(WorkerResolver.builder().name("serve-hold").discovery(discovery)
                .policy(w -> Verdict.accept()).fetchSchemas(false).exactDrain(true).build());
        resolver.awaitWorkers(1, WAIT);
        await().atMost(WAIT).until(() -> worker.coordinatorsHolding() == 1);
        server = closer.add(FleetServer.builder(resolver).host("127.0.0.1").port(0).http(false).start());
    }

    /** Starts {@code query} and waits until it holds a snapshot that lists the worker. */
    private FleetClientProcess holdingQuery() {
        FleetClientProcess query = closer.add(FleetClientProcess.query(server.grpcAddress()));
        await().atMost(WAIT).untilAsserted(() -> assertThat(query.printed(l -> l.startsWith("query running on snapshot")))
                .as("%s", query.transcript()).isTrue());
        assertThat(query.output()).as("the held snapshot lists the worker")
                .contains("worker " + worker.endpoint().url() + " 1.0.0");
        await().atMost(WAIT).until(() -> server.holds() == 1);
        return query;
    }

    /** {@code worker.close()} on a thread of its own, once the resolver no longer lists it; completes when it returns. */
    private CompletableFuture<Long> drainWhileHeld() {
        CompletableFuture<Long> closed = CompletableFuture.supplyAsync(() -> {
            worker.close();
            return System.nanoTime();
        });
        try {
            resolver.await(s -> s.workers().isEmpty(), WAIT);
        } catch (Exception e) {
            throw new AssertionError("the draining worker is still listed", e);
        }
        await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> !closed.isDone());
        assertThat(worker.coordinatorsHolding()).as("the service's resolver, for the open hold").isEqualTo(1);
        return closed;
    }

    @Test
    void aDrainingWorkerStopsRightAfterTheRemoteQueryEndsItsHold() throws Exception {
        FleetClientProcess query = holdingQuery();
        CompletableFuture<Long> closed = drainWhileHeld();

        long ended = System.nanoTime();
        query.command("end");
        long returned = closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        log.info("MEASURED python hold ended -> worker.close() returned: {} ms",
                TimeUnit.NANOSECONDS.toMillis(returned - ended));
        assertThat(query.awaitExit(WAIT)).as("%s", query.transcript()).isZero();
        assertThat(query.output()).containsPattern("released snapshot \\d+");
        await().atMost(WAIT).until(() -> server.holds() == 0);
    }

    @Test
    void aRemoteQueryKilledWithSigkillLetsGoWithItsConnection() throws Exception {
        FleetClientProcess query = holdingQuery();
        CompletableFuture<Long> closed = drainWhileHeld();

        long killed = System.nanoTime();
        query.kill(); // no goodbye: the kernel closes its socket
        long returned = closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        log.info("MEASURED python query killed -> worker.close() returned: {} ms",
                TimeUnit.NANOSECONDS.toMillis(returned - killed));
        await().atMost(WAIT).until(() -> server.holds() == 0);
    }
}
