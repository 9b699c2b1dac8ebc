package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.Caller;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.InvocationTarget;
import dev.rollcall.api.registry.TargetLookupException;
import dev.rollcall.api.registry.WorkerEndpoints;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.SnapshotListener;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** The registry's read views, answered by a real resolver from real workers. */
class RegistryViewsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @AutoClose
    private final Closer closeables = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    private <T extends AutoCloseable> T closing(T c) {
        return closeables.add(c);
    }

    private WorkerResolver resolver() {
        return closing(WorkerResolver.builder().discovery(discovery).policy(SemverRangePolicy.of("^1.0"))
                .backoff(Duration.ofMillis(20), Duration.ofMillis(200)).build());
    }

    private RollcallWorker worker(String version, ServiceInfo... services) throws IOException {
        RollcallWorker.Builder b = RollcallWorker.builder().version(version);
        for (ServiceInfo s : services) {
            b.advertise(s);
        }
        return closing(b.start());
    }

    private static ServiceInfo orders(Visibility cancel) {
        return new ServiceInfo("orders", Visibility.PUBLIC,
                List.of(HandlerInfo.of("place"), new HandlerInfo("cancel", Optional.ofNullable(cancel))));
    }

    /** A planner that needs only endpoints: it depends on that one view and nothing else of Rollcall. */
    static final class Planner {
        private final WorkerEndpoints endpoints;

        Planner(WorkerEndpoints endpoints) {
            this.endpoints = endpoints;
        }

        /** Splits {@code partitions} over the compatible endpoints, round robin. */
        List<List<Integer>> plan(int partitions) {
            List<WorkerEndpoint> workers = endpoints.compatibleEndpoints();
            List<List<Integer>> plan = new ArrayList<>();
            workers.forEach(w -> plan.add(new ArrayList<>()));
            for (int p = 0; p < partitions && !workers.isEmpty(); p++) {
                plan.get(p % workers.size()).add(p);
            }
            return plan;
        }
    }

    @Test
    void consumerDependsOnOneViewAndFollowsTheFleet() throws Exception {
        RollcallWorker a = worker("1.0.0");
        RollcallWorker b = worker("1.0.0");
        RollcallWorker c = worker("2.0.0");
        WorkerResolver resolver = resolver();
        Planner planner = new Planner(resolver.endpoints());

        discovery.push(List.of(a.endpoint(), b.endpoint(), c.endpoint()));
        resolver.await(s -> s.counts().pending() == 0 && s.counts().candidates() == 3, WAIT);
        assertThat(planner.plan(6)).containsExactly(List.of(0, 2, 4), List.of(1, 3, 5));

        discovery.push(List.of(a.endpoint()));
        resolver.await(s -> s.counts().candidates() == 1, WAIT);
        assertThat(planner.plan(3)).containsExactly(List.of(0, 1, 2));

        // The same planner, tested on a fixed snapshot a user builds without any resolver.
        WorkerEndpoint fixed = WorkerEndpoint.parse("grpc://127.0.0.1:9");
        FleetSnapshot snapshot = FleetSnapshot.builder(1).status(new WorkerStatus(fixed,
                WorkerStatus.State.COMPATIBLE, "", Optional.of(WorkerInfo.of(fixed, "1.0.0")))).build();
        assertThat(new Planner(snapshot).plan(2)).containsExactly(List.of(0, 1));
    }

    @Test
    void targetsAndServicesComeFromWhatRealWorkersAdvertise() throws Exception {
        RollcallWorker old = worker("1.0.0", orders(null), new ServiceInfo("admin", Visibility.INTERNAL,
                List.of(HandlerInfo.of("reindex"))));
        RollcallWorker upgraded = worker("1.1.0", orders(Visibility.INTERNAL),
                new ServiceInfo("web", Visibility.EXTERNAL, List.of(HandlerInfo.of("login"))));
        RollcallWorker rejected = worker("2.0.0", new ServiceInfo("udf", Visibility.PUBLIC,
                List.of(HandlerInfo.of("geo"))));
        WorkerResolver resolver = resolver();
        discovery.push(List.of(old.endpoint(), upgraded.endpoint(), rejected.endpoint()));
        FleetSnapshot snap = resolver.await(s -> s.counts().pending() == 0 && s.counts().candidates() == 3, WAIT);

        assertThat(snap.services()).containsExactly("admin", "orders", "web");
        assertThat(snap.latestEndpoints("orders")).containsExactly(upgraded.endpoint());
        assertThat(snap.target("orders", "place", Caller.INGRESS).workers()).hasSize(2);
        assertThat(snap.target("orders", "cancel", Caller.INGRESS).endpoints()).containsExactly(old.endpoint());
        assertThat(snap.target("web", "login", Caller.INGRESS).endpoints()).containsExactly(upgraded.endpoint());
        assertThat(resolver.targets().target("admin", "reindex", Caller.INTERNAL).visibility())
                .isEqualTo(Visibility.INTERNAL);
        assertLookupFails(snap, "admin", "reindex", Caller.INGRESS, TargetLookupException.Reason.NOT_PUBLIC);
        assertLookupFails(snap, "web", "login", Caller.INTERNAL, TargetLookupException.Reason.NOT_INTERNAL);
        assertLookupFails(snap, "udf", "geo", Caller.INTERNAL, TargetLookupException.Reason.NO_COMPATIBLE_WORKER);
        assertLookupFails(snap, "orders", "refund", Caller.INTERNAL, TargetLookupException.Reason.NOT_FOUND);
    }

    private static void assertLookupFails(FleetSnapshot snap, String service, String handler, Caller caller,
                                          TargetLookupException.Reason reason) {
        assertThatThrownBy(() -> snap.target(service, handler, caller))
                .isInstanceOfSatisfying(TargetLookupException.class, e -> assertThat(e.reason()).isEqualTo(reason))
                .hasMessageContaining("service '" + service + "' handler '" + handler + "'");
    }

    /**
     * Four readers check cross-view invariants on pinned snapshots while the writer churns: every
     * worker the services and targets views list is a compatible endpoint, with the version the
     * versions view gives; snapshot numbers never go back.
     */
    @Test
    void everyViewAnswersFromOneSnapshotWhileTheWriterChurns() throws Exception {
        List<RollcallWorker> workers = new ArrayList<>();
        String[] versions = {"1.0.0", "1.1.0", "1.2.0", "2.0.0"};
        for (int i = 0; i < 12; i++) {
            workers.add(worker(versions[i % versions.length], orders(i % 3 == 0 ? Visibility.INTERNAL : null),
                    ServiceInfo.of("stock-" + (i % 3))));
        }
        WorkerResolver resolver = resolver();
        discovery.push(workers.stream().map(RollcallWorker::endpoint).toList());
        resolver.await(s -> s.counts().pending() == 0 && s.counts().candidates() == 12, WAIT);
        long firstNumber = resolver.pin().number();

        AtomicBoolean done = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        List<String> violations = new CopyOnWriteArrayList<>();
        ExecutorService readers = Executors.newFixedThreadPool(4);
        List<Future<?>> running = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            running.add(readers.submit(() -> {
                long last = -1;
                while (!done.get() || reads.get() < 100_000) {
                    FleetSnapshot snap = resolver.pin();
                    if (snap.number() < last) {
                        violations.add("snapshot number went back from " + last + " to " + snap.number());
                    }
                    last = snap.number();
                    check(snap, violations);
                    if (reads.incrementAndGet() >= 100_000 && done.get()) {
                        break;
                    }
                }
            }));
        }
        Random random = new Random(42);
        long goal = firstNumber + 60;
        Set<WorkerEndpoint> previous = new HashSet<>(workers.stream().map(RollcallWorker::endpoint).toList());
        while (resolver.pin().number() < goal || reads.get() < 100_000) {
            Set<WorkerEndpoint> subset = new HashSet<>();
            while (subset.isEmpty() || subset.equals(previous)) { // a set that differs: the writer must write
                subset.clear();
                for (RollcallWorker w : workers) {
                    if (random.nextInt(3) > 0) {
                        subset.add(w.endpoint());
                    }
                }
            }
            previous = Set.copyOf(subset);
            long before = resolver.pin().number();
            discovery.push(subset);
            resolver.await(s -> s.number() > before && s.counts().pending() == 0, WAIT);
        }
        done.set(true);
        for (Future<?> f : running) {
            f.get(1, TimeUnit.MINUTES);
        }
        readers.shutdown();
        assertThat(reads.get()).isGreaterThanOrEqualTo(100_000);
        assertThat(resolver.pin().number()).isGreaterThanOrEqualTo(goal);
        assertThat(violations).isEmpty();
    }

    private static void check(FleetSnapshot snap, List<String> violations) {
        Set<WorkerEndpoint> compatible = new HashSet<>(snap.compatibleEndpoints());
        if (compatible.size() != snap.counts().compatible()) {
            violations.add(snap + ": " + compatible.size() + " endpoints, counts say " + snap.counts());
        }
        for (String service : snap.services()) {
            for (WorkerInfo w : snap.workersOffering(service)) {
                expectCompatible(snap, w, compatible, violations);
            }
            for (WorkerEndpoint e : snap.latestEndpoints(service)) {
                if (!compatible.contains(e)) {
                    violations.add(snap + ": latest endpoint " + e + " of " + service + " is not compatible");
                }
            }
        }
        for (InvocationTarget t : snap.targets()) {
            for (WorkerInfo w : t.workers()) {
                expectCompatible(snap, w, compatible, violations);
            }
        }
    }

    private static void expectCompatible(FleetSnapshot snap, WorkerInfo w, Set<WorkerEndpoint> compatible,
                                         List<String> violations) {
        if (!compatible.contains(w.endpoint())) {
            violations.add(snap + ": " + w.endpoint() + " is listed but not compatible");
        }
        if (!snap.version(w.endpoint().url()).equals(Optional.of(w.version()))) {
            violations.add(snap + ": " + w.endpoint() + " is " + w.version() + " in one view, "
                    + snap.version(w.endpoint().url()) + " in the versions view");
        }
    }

    @Test
    void awaitVersionWakesWhenTheSnapshotIsPublished() throws Exception {
        RollcallWorker a = worker("1.0.0");
        WorkerResolver resolver = resolver();
        discovery.push(List.of());
        long now = resolver.awaitVersion(1, WAIT).number();
        CountDownLatch waiting = new CountDownLatch(1);
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        try {
            Future<FleetSnapshot> woken = waiter.submit(() -> {
                waiting.countDown();
                return resolver.awaitVersion(now + 1, Duration.ofMinutes(1));
            });
            waiting.await();
            discovery.push(List.of(a.endpoint()));
            assertThat(woken.get(30, TimeUnit.SECONDS).number()).isGreaterThanOrEqualTo(now + 1);
        } finally {
            waiter.shutdownNow();
        }
    }

    @Test
    void awaitVersionTimesOutNamingWhatItWaitedFor() throws Exception {
        WorkerResolver resolver = resolver();
        discovery.push(List.of());
        FleetSnapshot now = resolver.awaitVersion(1, WAIT);
        assertThatThrownBy(() -> resolver.awaitVersion(now.number() + 5, Duration.ofMillis(200)))
                .isInstanceOf(TimeoutException.class)
                .hasMessage("snapshot " + (now.number() + 5) + " was not published within PT0.2S; the current one is "
                        + now);
    }

    @Test
    void listenersReceiveSnapshotsOnceInIncreasingOrderEndingWithTheLatest() throws Exception {
        List<RollcallWorker> workers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            workers.add(worker("1.0.0"));
        }
        WorkerResolver resolver = resolver();
        List<Long> seen = new CopyOnWriteArrayList<>();
        long registeredAt = resolver.pin().number();
        SnapshotListener.Registration registration = resolver.addListener(s -> seen.add(s.number()));
        try {
            for (int round = 0; round < 10; round++) {
                List<WorkerEndpoint> subset = workers.subList(0, 1 + round % workers.size()).stream()
                        .map(RollcallWorker::endpoint).toList();
                long before = resolver.pin().number();
                discovery.push(subset);
                resolver.await(s -> s.number() > before && s.counts().pending() == 0, WAIT);
            }
            long last = resolver.pin().number();
            org.awaitility.Awaitility.await().atMost(WAIT).until(() -> !seen.isEmpty() && seen.get(seen.size() - 1) == last);
        } finally {
            registration.close();
        }
        // Latest wins: a listener that was busy may skip snapshots, never see one twice or an older
        // one after a newer; it starts with the one current at its registration and ends with the last.
        assertThat(seen.get(0)).isGreaterThanOrEqualTo(registeredAt);
        for (int i = 1; i < seen.size(); i++) {
            assertThat(seen.get(i)).as("snapshot after %s", seen.get(i - 1)).isGreaterThan(seen.get(i - 1));
        }
    }
}
