package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.core.WorkersUnavailableException;
import dev.rollcall.testkit.Closer;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.ThreadCensus;
import dev.rollcall.local.UnresponsiveWorker;
import dev.rollcall.local.WorkerFleet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** The resolver against real loopback workers over real gRPC: nothing of the resolver is mocked. */
class WorkerResolverTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Accepts 1.x: the shape of a real per-worker policy, without depending on one. */
    private static final VersionPolicy MAJOR_ONE = new VersionPolicy() {
        @Override
        public Verdict check(WorkerInfo worker) {
            return worker.version().startsWith("1.") ? Verdict.accept()
                    : Verdict.reject("version '" + worker.version() + "' is not 1.x");
        }

        @Override
        public String description() {
            return "major 1";
        }
    };

    @AutoClose
    private final Closer closeables = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    private <T extends AutoCloseable> T closing(T c) {
        return closeables.add(c);
    }

    private WorkerResolver resolver(WorkerResolver.Builder b) {
        return closing(b.discovery(discovery).policy(MAJOR_ONE).build());
    }

    private WorkerResolver resolver() {
        return resolver(WorkerResolver.builder().backoff(Duration.ofMillis(20), Duration.ofMillis(200)));
    }

    private static Set<String> urls(List<WorkerEndpoint> endpoints) {
        Set<String> s = new java.util.TreeSet<>();
        endpoints.forEach(e -> s.add(e.url()));
        return s;
    }

    private static Set<String> urls(WorkerEndpoint... endpoints) {
        return urls(List.of(endpoints));
    }

    private static State state(WorkerResolver r, WorkerEndpoint e) {
        return r.pin().status(e.url()).map(WorkerStatus::state).orElse(null);
    }

    @Test
    void returnsOnlyCompatibleWorkers() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.4.0", "1.5.1", "2.0.0"));
        WorkerResolver r = resolver();
        discovery.push(fleet.endpoints());

        await().atMost(WAIT).until(() -> r.pin().counts().pending() == 0 && r.pin().counts().candidates() == 3);

        FleetSnapshot s = r.pin();
        assertThat(urls(s.compatibleEndpoints())).isEqualTo(urls(fleet.worker(0).endpoint(), fleet.worker(1).endpoint()));
        assertThat(r.workers()).extracting(WorkerInfo::version).containsExactlyInAnyOrder("1.4.0", "1.5.1");
        WorkerStatus rejected = s.status(fleet.worker(2).endpoint().url()).orElseThrow();
        assertThat(rejected.state()).isEqualTo(State.REJECTED);
        assertThat(rejected.reason()).isEqualTo("version '2.0.0' is not 1.x");
        assertThat(s.version(fleet.worker(2).endpoint().url())).contains("2.0.0");
        assertThat(s.versionHistogram()).containsExactly(
                java.util.Map.entry("1.4.0", 1), java.util.Map.entry("1.5.1", 1), java.util.Map.entry("2.0.0", 1));
        assertThat(s.policy()).isEqualTo("major 1");
    }

    @Test
    void probesANewUrlExactlyOnce() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0", "1.0.0", "1.0.0"));
        FleetWorker a = fleet.worker(0);
        FleetWorker b = fleet.worker(1);
        FleetWorker c = fleet.worker(2);
        WorkerResolver r = resolver();

        discovery.push(List.of(a.endpoint()));
        await().atMost(WAIT).until(() -> state(r, a.endpoint()) == State.COMPATIBLE);
        for (int i = 0; i < 20; i++) {
            discovery.push(List.of(a.endpoint(), b.endpoint()));
        }
        await().atMost(WAIT).until(() -> state(r, b.endpoint()) == State.COMPATIBLE);
        for (int i = 0; i < 20; i++) {
            discovery.push(List.of(a.endpoint(), b.endpoint()));
        }
        // A last, different set: once it is applied, every earlier push has been applied too.
        discovery.push(List.of(a.endpoint(), b.endpoint(), c.endpoint()));
        await().atMost(WAIT).until(() -> state(r, c.endpoint()) == State.COMPATIBLE);

        assertThat(a.probeCount()).isEqualTo(1);
        assertThat(b.probeCount()).isEqualTo(1);
        assertThat(c.probeCount()).isEqualTo(1);
        assertThat(r.probesSent()).isEqualTo(3);
    }

    @Test
    void evictsWorkerThatLeftDiscovery() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0", "1.0.0"));
        WorkerResolver r = resolver();
        discovery.push(fleet.endpoints());
        FleetSnapshot both = r.awaitWorkers(2, WAIT);

        discovery.push(List.of(fleet.worker(0).endpoint()));
        FleetSnapshot next = r.awaitVersion(both.number() + 1, WAIT);

        assertThat(next.number()).isEqualTo(both.number() + 1);
        assertThat(urls(next.compatibleEndpoints())).containsExactly(fleet.worker(0).endpoint().url());
        assertThat(next.status(fleet.worker(1).endpoint().url())).isEmpty();
        assertThat(next.counts().candidates()).isEqualTo(1);
    }

    @Test
    void includesUnreachableWorkerOnceItAnswers() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start());
        WorkerEndpoint later = WorkerFleet.freeEndpoint();
        WorkerResolver r = resolver();
        discovery.push(List.of(later));

        await().atMost(WAIT).until(() -> state(r, later) == State.UNREACHABLE);
        WorkerStatus down = r.pin().status(later.url()).orElseThrow();
        assertThat(down.reason()).startsWith("UNAVAILABLE");
        assertThat(r.workers()).isEmpty();

        fleet.workerOn(later, "1.2.0");
        FleetSnapshot up = r.awaitWorkers(1, WAIT);
        assertThat(up.workers()).extracting(WorkerInfo::version).containsExactly("1.2.0");
    }

    @Test
    void refiltersWorkerThatRestartedInPlace() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.4.0"));
        FleetWorker w = fleet.worker(0);
        WorkerResolver r = resolver();
        List<FleetSnapshot> published = new CopyOnWriteArrayList<>();
        r.addListener(published::add);
        discovery.push(fleet.endpoints());
        String firstInstance = r.awaitWorkers(1, WAIT).workers().get(0).instanceId();
        // Listeners may skip snapshots (latest wins): let this one see the first process in use
        // before it restarts, or the history below has nothing to start from.
        await().atMost(WAIT).until(() -> published.stream().anyMatch(snap -> snap.workers().stream()
                .anyMatch(info -> info.instanceId().equals(firstInstance))));

        w.restart("2.0.0");
        await().atMost(WAIT).until(() -> state(r, w.endpoint()) == State.REJECTED);
        WorkerStatus s = r.pin().status(w.endpoint().url()).orElseThrow();
        assertThat(s.info().orElseThrow().version()).isEqualTo("2.0.0");
        assertThat(s.info().orElseThrow().instanceId()).isNotEqualTo(firstInstance).isEqualTo(w.instanceId());
        assertThat(r.workers()).isEmpty();
        // Listeners may skip snapshots (latest wins): let this one see the rejection before it ends.
        await().atMost(WAIT).until(() -> !published.isEmpty() && published.get(published.size() - 1)
                .status(w.endpoint().url()).map(WorkerStatus::state).orElse(null) == State.REJECTED);

        w.restart("1.6.0");
        assertThat(r.awaitWorkers(1, WAIT).workers()).extracting(WorkerInfo::version).containsExactly("1.6.0");
        String lastInstance = w.instanceId();
        await().atMost(WAIT).until(() -> !published.isEmpty()
                && published.get(published.size() - 1).number() >= r.pin().number());

        // Every snapshot that served the worker served a process that was running that version...
        for (FleetSnapshot snap : published) {
            assertThat(snap.workers()).as("snapshot %d", snap.number())
                    .allMatch(info -> info.instanceId().equals(firstInstance) && info.version().equals("1.4.0")
                            || info.instanceId().equals(lastInstance) && info.version().equals("1.6.0"));
        }
        // ...and between the dropped connection and the restarted worker's verdict it was out:
        // the snapshot right after the last one that served the first process shows it pending, or
        // draining when its close() told the resolver so before the connection dropped.
        List<State> states = new ArrayList<>();
        int lastServingFirst = -1;
        for (FleetSnapshot snap : published) {
            State state = snap.status(w.endpoint().url()).map(WorkerStatus::state).orElse(null);
            if (states.isEmpty() || states.get(states.size() - 1) != state) {
                states.add(state);
            }
            if (snap.workers().stream().anyMatch(info -> info.instanceId().equals(firstInstance))) {
                lastServingFirst = states.size() - 1;
            }
        }
        assertThat(lastServingFirst).as("states %s", states).isNotNegative();
        List<State> after = states.subList(lastServingFirst, states.size());
        assertThat(after).as("states %s", states).startsWith(State.COMPATIBLE)
                .contains(State.REJECTED).endsWith(State.COMPATIBLE);
        assertThat(after.get(1)).as("states %s", states).isIn(State.PENDING, State.DRAINING);
    }

    @Test
    void noticesRestartAtTheRefreshWhenChannelsAreNotKept() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.4.0"));
        FleetWorker w = fleet.worker(0);
        WorkerResolver r = resolver(WorkerResolver.builder()
                .keepProbeChannels(false)
                .refreshInterval(Duration.ofMillis(300))
                .backoff(Duration.ofMillis(20), Duration.ofMillis(200)));
        discovery.push(fleet.endpoints());
        r.awaitWorkers(1, WAIT);

        w.restart("2.0.0");
        await().atMost(WAIT).until(() -> state(r, w.endpoint()) == State.REJECTED);
        assertThat(r.pin().version(w.endpoint().url())).contains("2.0.0");
    }

    @Test
    void hungWorkerDoesNotDelayTheOthers() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0", "1.1.0"));
        UnresponsiveWorker hung = fleet.addUnresponsive();
        // A deadline far longer than the test: the others must not wait for it.
        WorkerResolver r = resolver(WorkerResolver.builder().probeTimeout(Duration.ofMinutes(5)));
        discovery.push(fleet.endpoints());

        FleetSnapshot s = r.awaitWorkers(2, WAIT);
        assertThat(s.status(hung.endpoint().url()).orElseThrow().state()).isEqualTo(State.PENDING);
        assertThat(hung.connectionsAccepted()).isEqualTo(1);
    }

    @Test
    void boundsProbesInFlightAndQueuesTheRest() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start());
        List<UnresponsiveWorker> hung = List.of(fleet.addUnresponsive(), fleet.addUnresponsive(),
                fleet.addUnresponsive(), fleet.addUnresponsive());
        WorkerResolver r = resolver(WorkerResolver.builder().probeConcurrency(2).probeTimeout(Duration.ofMinutes(5))
                .backoff(Duration.ofMinutes(5), Duration.ofMinutes(5)));
        discovery.push(fleet.endpoints());
        await().atMost(WAIT).until(() -> hung.stream().mapToInt(UnresponsiveWorker::connectionsAccepted).sum() == 2);

        FleetWorker real = fleet.addWorker("1.0.0");
        discovery.push(fleet.endpoints());
        // The snapshot that shows the new worker is published by the same task that would have
        // started its probe: no slot was free, so it waits.
        await().atMost(WAIT).until(() -> r.pin().status(real.endpoint().url()).isPresent());
        assertThat(r.probesSent()).isEqualTo(2);
        assertThat(state(r, real.endpoint())).isEqualTo(State.PENDING);

        hung.forEach(UnresponsiveWorker::close); // their probes fail at once and free the slots
        assertThat(r.awaitWorkers(1, WAIT).workers()).extracting(w -> w.endpoint().url())
                .containsExactly(real.endpoint().url());
        assertThat(real.probeCount()).isEqualTo(1);
    }

    @Test
    void hungWorkerIsUnreachableOnceItsDeadlinePasses() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start());
        UnresponsiveWorker hung = fleet.addUnresponsive();
        WorkerResolver r = resolver(WorkerResolver.builder().probeTimeout(Duration.ofMillis(300))
                .backoff(Duration.ofSeconds(30), Duration.ofSeconds(30)));
        discovery.push(fleet.endpoints());

        await().atMost(WAIT).until(() -> state(r, hung.endpoint()) == State.UNREACHABLE);
        assertThat(r.pin().status(hung.endpoint().url()).orElseThrow().reason()).startsWith("DEADLINE_EXCEEDED");
    }

    @Test
    void awaitWorkersFailsWithCountsOfEachKind() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0", "3.0.0"));
        WorkerEndpoint down = WorkerFleet.freeEndpoint();
        WorkerResolver r = resolver(WorkerResolver.builder().backoff(Duration.ofSeconds(30), Duration.ofSeconds(30)));
        List<WorkerEndpoint> candidates = new ArrayList<>(fleet.endpoints());
        candidates.add(down);
        discovery.push(candidates);
        await().atMost(WAIT).until(() -> r.pin().counts().pending() == 0 && r.pin().counts().candidates() == 3);

        assertThatThrownBy(() -> r.awaitWorkers(2, Duration.ofMillis(200)))
                .isInstanceOf(WorkersUnavailableException.class)
                .hasMessageContaining("wanted at least 2 compatible workers")
                .hasMessageContaining("3 candidates: 1 compatible, 1 rejected by version, 1 unreachable, 0 pending")
                .hasMessageContaining(down.url() + " UNREACHABLE")
                .satisfies(e -> assertThat(((WorkersUnavailableException) e).counts().rejected()).isEqualTo(1));
    }

    @Test
    void keepsLastGoodSetWhileDiscoveryFailsAndMarksItStale() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
        WorkerResolver r = resolver();
        discovery.push(fleet.endpoints());
        FleetSnapshot good = r.awaitWorkers(1, WAIT);

        discovery.fail(new IllegalStateException("backend unreachable"));
        FleetSnapshot stale = r.awaitVersion(good.number() + 1, WAIT);
        assertThat(stale.staleSince()).isPresent();
        assertThat(stale.workers()).isEqualTo(good.workers());

        discovery.push(fleet.endpoints());
        FleetSnapshot fresh = r.awaitVersion(stale.number() + 1, WAIT);
        assertThat(fresh.staleSince()).isEmpty();
        assertThat(fresh.workers()).isEqualTo(good.workers());
    }

    @Test
    void listenersSeeEverySnapshotInOrderOnTheirOwnThread() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0", "1.0.0"));
        WorkerResolver r = resolver(WorkerResolver.builder().name("listening")
                .backoff(Duration.ofMillis(20), Duration.ofMillis(200)));
        List<Long> numbers = new CopyOnWriteArrayList<>();
        List<String> threads = new CopyOnWriteArrayList<>();
        closing(r.addListener(s -> {
            numbers.add(s.number());
            threads.add(Thread.currentThread().getName());
        }));
        discovery.push(fleet.endpoints());
        FleetSnapshot last = r.awaitWorkers(2, WAIT);

        await().atMost(WAIT).until(() -> numbers.contains(last.number()));
        assertThat(numbers).isSorted().doesNotHaveDuplicates().startsWith(0L);
        assertThat(threads).allMatch(t -> t.startsWith("rollcall-listeners-listening"));
    }

    @Test
    void concurrentReadersNeverSeeATornSnapshot() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0", "1.0.0", "1.0.0", "1.1.0", "1.1.0", "1.1.0", "2.0.0"));
        List<WorkerEndpoint> groupA = fleet.endpoints().subList(0, 3);
        List<WorkerEndpoint> groupB = new ArrayList<>(fleet.endpoints().subList(3, 7));
        Set<String> a = urls(groupA);
        Set<String> b = urls(groupB.subList(0, 3));
        WorkerResolver r = resolver();

        AtomicInteger violations = new AtomicInteger();
        AtomicInteger reads = new AtomicInteger();
        List<String> problems = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> readers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread t = new Thread(() -> {
                long lastNumber = -1;
                while (!stop.get()) {
                    FleetSnapshot s = r.pin();
                    reads.incrementAndGet();
                    Set<String> compatible = urls(s.compatibleEndpoints());
                    String problem = null;
                    if (s.number() < lastNumber) {
                        problem = "snapshot went back from " + lastNumber + " to " + s.number();
                    } else if (!compatible.isEmpty() && !a.containsAll(compatible) && !b.containsAll(compatible)) {
                        problem = "snapshot " + s.number() + " mixes both groups: " + compatible;
                    } else if (s.workers().size() != s.counts().compatible()
                            || compatible.size() != s.counts().compatible()
                            || s.statuses().size() != s.counts().candidates()
                            || s.versionHistogram().values().stream().mapToInt(Integer::intValue).sum()
                            != s.counts().compatible() + s.counts().rejected()) {
                        problem = "snapshot " + s.number() + " disagrees with itself: " + s.counts();
                    }
                    if (problem != null) {
                        violations.incrementAndGet();
                        problems.add(problem);
                    }
                    lastNumber = s.number();
                }
            }, "reader-" + i);
            t.start();
            readers.add(t);
        }
        try {
            for (int round = 0; round < 15; round++) {
                discovery.push(groupA);
                await().atMost(WAIT).until(() -> urls(r.pin().compatibleEndpoints()).equals(a));
                discovery.push(groupB);
                await().atMost(WAIT).until(() -> urls(r.pin().compatibleEndpoints()).equals(b)
                        && r.pin().counts().rejected() == 1);
            }
        } finally {
            stop.set(true);
            for (Thread t : readers) {
                t.join(10_000);
            }
        }
        assertThat(reads.get()).isGreaterThan(1000);
        assertThat(problems).isEmpty();
        assertThat(violations.get()).isZero();
    }

    @Test
    void closeStopsEveryThreadItStartedAndClosesDiscovery() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
        fleet.addUnresponsive(); // a probe still in flight when we close
        WorkerResolver r = WorkerResolver.builder().name("closing").discovery(discovery).policy(MAJOR_ONE)
                .probeTimeout(Duration.ofMinutes(5)).build();
        discovery.push(fleet.endpoints());
        r.awaitWorkers(1, WAIT);
        assertThat(ThreadCensus.take().names("rollcall-resolver-closing")).isNotEmpty();
        assertThat(ThreadCensus.take().names("rollcall-probe-closing")).isNotEmpty();

        r.close();

        assertThat(discovery.isClosed()).isTrue();
        ThreadCensus.awaitNoneAlive(WAIT, "rollcall-resolver-closing", "rollcall-probe-closing",
                "rollcall-listeners-closing");
        assertThat(r.workers()).hasSize(1); // readers keep the last snapshot
    }
}
