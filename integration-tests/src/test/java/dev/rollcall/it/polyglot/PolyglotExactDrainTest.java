package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.polyglot.ReferenceWorker.Language;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exact drain between Rollcall's coordinator ({@code exactDrain(true)}, a lease open) and the Node
 * and Python reference workers, each a real process on loopback: after SIGTERM the worker keeps
 * serving while the lease holds a snapshot that lists it, however long its drain-quiet and grace,
 * and exits right after the lease closes (the resolver's ReleaseWorker), with no quiet period.
 */
class PolyglotExactDrainTest {

    private static final Logger log = LoggerFactory.getLogger(PolyglotExactDrainTest.class);
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** How long something that must not happen is given to happen anyway. */
    private static final Duration QUIET = Duration.ofMillis(700);

    @AutoClose
    private final Closer closer = new Closer();

    private static boolean lists(FleetSnapshot s, WorkerEndpoint e) {
        return s.status(e.url()).map(st -> st.state() == WorkerStatus.State.COMPATIBLE).orElse(false);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void theWorkerStopsWhenTheLastLeaseThatListsItCloses(Language language) throws Exception {
        // A quiet period and a grace far longer than the test: a stop that waited for either is not exact.
        ReferenceWorker worker = closer.add(ReferenceWorker.start(language, "1.0.0", "--drain-quiet-ms", "60000",
                "--shutdown-grace-ms", "60000"));
        PushDiscovery discovery = new PushDiscovery();
        discovery.push(List.of(worker.endpoint()));
        WorkerResolver resolver = closer.add(WorkerResolver.builder().name("exact-" + language).discovery(discovery)
                .policy(w -> Verdict.accept()).fetchSchemas(false).exactDrain(true).build());
        resolver.awaitWorkers(1, WAIT);
        await().atMost(WAIT).until(() -> worker.printed(l -> l.contains("opened by holder")));
        SnapshotLease lease = resolver.lease();

        worker.terminate();
        resolver.await(s -> !lists(s, worker.endpoint()), WAIT);
        await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(worker::isAlive); // held by the open lease
        assertThat(worker.output()).as("DRAINING says the coordinator holds it").contains("DRAINING, labels {}, 0 services, 1 holders");

        long closed = System.nanoTime();
        lease.close();
        assertThat(worker.awaitExit(WAIT)).as("exit code; output:%n%s", worker.output()).isZero();
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closed);
        log.info("MEASURED {} worker: lease.close() -> the process exited: {} ms", language, took);
        assertThat(took).as("from lease.close() to the exit, not its 60 s quiet period or grace").isLessThan(10_000);
        assertThat(worker.output()).contains("every holder let go").contains("released by ");
    }
}
