package dev.rollcall.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.core.WorkersUnavailableException;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.ThreadCensus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Closing a resolver while probes are in flight: every thread it started ends, and every connection
 * it opened is closed, counted from the workers' side.
 */
class ResolverCloseTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final List<ScriptedWorker> workers = new ArrayList<>();

    @AfterEach
    void stopWorkers() {
        workers.forEach(ScriptedWorker::close);
    }

    /** Two workers that answer and three that take the probe and never answer. */
    private List<WorkerEndpoint> startWorkers() {
        for (int i = 0; i < 2; i++) {
            workers.add(ScriptedWorker.answering(ScriptedWorker.version("1.0.0")));
        }
        for (int i = 0; i < 3; i++) {
            workers.add(ScriptedWorker.start((out, later) -> {
                // never answers: the probe stays in flight
            }));
        }
        return workers.stream().map(ScriptedWorker::endpoint).toList();
    }

    private int openConnections() {
        return workers.stream().mapToInt(ScriptedWorker::openConnections).sum();
    }

    /** Live threads Rollcall's coordinator side names, by name prefix up to the resolver's name. */
    private static Map<String, Integer> rollcallThreads() {
        Map<String, Integer> count = new TreeMap<>(ThreadCensus.take().byKind("rollcall-"));
        count.keySet().removeIf(kind -> kind.startsWith("rollcall-worker"));
        return count;
    }

    /**
     * No kind of Rollcall thread is more numerous than before the test (one that an earlier test
     * left ending meanwhile is fine), and none carries the name of this test's resolvers.
     */
    private static void assertNoneLeftBehind(Map<String, Integer> before) {
        Map<String, Integer> now = rollcallThreads();
        assertThat(now.keySet()).noneMatch(n -> n.contains("closing-") || n.contains("-cycle"));
        now.forEach((kind, n) -> assertThat(n).as(kind).isLessThanOrEqualTo(before.getOrDefault(kind, 0)));
    }

    /** A resolver that has probed every worker once more: three of its probes are still in flight. */
    private WorkerResolver resolverWithProbesInFlight(String name, PushDiscovery discovery) throws Exception {
        long probed = workers.get(0).probes();
        WorkerResolver r = WorkerResolver.builder().name(name).discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0")).probeTimeout(Duration.ofMinutes(5)).build();
        try {
            discovery.push(workers.stream().map(ScriptedWorker::endpoint).toList());
            r.awaitWorkers(2, WAIT);
            // Every hanging worker has its probe and all five hold a connection from the resolver.
            await().atMost(WAIT).until(() -> workers.stream().allMatch(w -> w.probes() == probed + 1)
                    && openConnections() == 5);
            return r;
        } catch (Exception | AssertionError e) {
            r.close();
            throw e;
        }
    }

    @Test
    void closingWithProbesInFlightEndsEveryThreadAndClosesEveryConnection() throws Exception {
        startWorkers();
        Map<String, Integer> before = rollcallThreads();
        PushDiscovery discovery = new PushDiscovery();
        WorkerResolver r = resolverWithProbesInFlight("closing-in-flight", discovery);
        assertThat(rollcallThreads().keySet()).anyMatch(n -> n.startsWith("rollcall-resolver-closing-in-flight"))
                .anyMatch(n -> n.startsWith("rollcall-probe-closing-in-flight"));

        r.close();

        assertThat(discovery.isClosed()).isTrue();
        await().atMost(WAIT).untilAsserted(() -> assertNoneLeftBehind(before));
        await().atMost(WAIT).untilAsserted(() -> assertThat(openConnections()).isZero());
        assertThat(r.workers()).hasSize(2); // readers keep the last snapshot
    }

    @Test
    void openingAndClosingTenTimesLeavesNothingBehind() throws Exception {
        startWorkers();
        Map<String, Integer> before = rollcallThreads();
        for (int i = 0; i < 10; i++) {
            resolverWithProbesInFlight("cycle", new PushDiscovery()).close();
            await().atMost(WAIT).untilAsserted(() -> assertThat(openConnections()).isZero());
        }
        await().atMost(WAIT).untilAsserted(() -> assertNoneLeftBehind(before));
        // Each cycle's probes were cancelled on the workers' side too: none is still waiting.
        assertThat(workers.subList(2, 5)).allSatisfy(w -> assertThat(w.probes()).isEqualTo(10));
    }

    @Test
    void closingWakesACallerWaitingForWorkers() throws Exception {
        startWorkers();
        WorkerResolver r = resolverWithProbesInFlight("closing-waiter", new PushDiscovery());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread waiter = new Thread(() -> thrown.set(catchThrowable(() -> r.awaitWorkers(5, Duration.ofMinutes(5)))),
                "awaiting-workers");
        waiter.setDaemon(true);
        waiter.start();
        // Close only once the caller is blocked inside awaitWorkers: a caller that comes after the
        // close returns at once, and would pass without any wake-up.
        await().atMost(WAIT).until(() -> isWaitingIn(waiter, "awaitWorkers"));

        r.close();

        waiter.join(WAIT.toMillis());
        assertThat(waiter.isAlive()).as("the caller is still waiting after close()").isFalse();
        assertThat(thrown.get()).isInstanceOf(WorkersUnavailableException.class)
                .hasMessageContaining("wanted at least 5 compatible workers");
    }

    private static boolean isWaitingIn(Thread thread, String method) {
        Thread.State state = thread.getState();
        return (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING)
                && Arrays.stream(thread.getStackTrace()).anyMatch(frame -> frame.getMethodName().equals(method));
    }
}
