package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Rendezvous routing over fixed snapshots: stable keys while the fleet churns. */
class KeyRoutingTest {

    private static final int KEYS = 100_000;
    private static final String SERVICE = "demo.v1.Orders";

    private static WorkerStatus worker(int i, String version, Visibility visibility) {
        WorkerEndpoint e = WorkerEndpoint.of("127.0.0." + (1 + i / 200), 7000 + i);
        WorkerInfo info = new WorkerInfo(e, version, "i" + i, Map.of(),
                List.of(new ServiceInfo(SERVICE, visibility, List.of(HandlerInfo.of("Place")))));
        return new WorkerStatus(e, WorkerStatus.State.COMPATIBLE, "", Optional.of(info));
    }

    private static FleetSnapshot snapshot(List<WorkerStatus> statuses) {
        return FleetSnapshot.builder(1).publishedAt(Instant.EPOCH).policy("test").statuses(statuses).build();
    }

    private static List<WorkerStatus> fleet(int n) {
        List<WorkerStatus> workers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            workers.add(worker(i, "1.0.0", Visibility.PUBLIC));
        }
        return workers;
    }

    private static Map<String, String> routeAll(KeyRouting routing) {
        Map<String, String> byKey = new HashMap<>();
        for (int k = 0; k < KEYS; k++) {
            String key = "customer-" + k;
            byKey.put(key, routing.route(SERVICE, "Place", Caller.INGRESS, key).endpoint().url());
        }
        return byKey;
    }

    @Test
    void removingOneOfTwentyWorkersMovesOnlyItsKeys() {
        List<WorkerStatus> twenty = fleet(20);
        Map<String, String> before = routeAll(snapshot(twenty));
        String leaving = twenty.get(7).endpoint().url();
        List<WorkerStatus> nineteen = new ArrayList<>(twenty);
        nineteen.remove(7);
        Map<String, String> after = routeAll(snapshot(nineteen));

        long moved = before.keySet().stream().filter(k -> !before.get(k).equals(after.get(k))).count();
        assertThat(moved).isLessThanOrEqualTo((long) (1.2 * KEYS / 20));
        assertThat(before.keySet().stream().filter(k -> !before.get(k).equals(after.get(k))))
                .allMatch(k -> before.get(k).equals(leaving));
        // Its keys spread over the others rather than piling onto one.
        assertThat(before.keySet().stream().filter(k -> before.get(k).equals(leaving)).map(after::get).distinct())
                .hasSize(19);
    }

    @Test
    void addingATwentyFirstWorkerMovesOnlyTheKeysItTakes() {
        List<WorkerStatus> twenty = fleet(20);
        Map<String, String> before = routeAll(snapshot(twenty));
        List<WorkerStatus> twentyOne = new ArrayList<>(twenty);
        WorkerStatus joining = worker(20, "1.0.0", Visibility.PUBLIC);
        twentyOne.add(joining);
        Map<String, String> after = routeAll(snapshot(twentyOne));

        long moved = before.keySet().stream().filter(k -> !before.get(k).equals(after.get(k))).count();
        assertThat(moved).isLessThanOrEqualTo((long) (1.2 * KEYS / 21)).isPositive();
        assertThat(before.keySet().stream().filter(k -> !before.get(k).equals(after.get(k))))
                .allMatch(k -> after.get(k).equals(joining.endpoint().url()));
    }

    @Test
    void keysSpreadEvenlyAndRouteTheSameInEverySnapshotOfTheSameFleet() {
        List<WorkerStatus> twenty = fleet(20);
        Map<String, String> first = routeAll(snapshot(twenty));
        List<WorkerStatus> shuffled = new ArrayList<>(twenty);
        java.util.Collections.reverse(shuffled);
        assertThat(routeAll(snapshot(shuffled))).isEqualTo(first);
        Map<String, Long> perWorker = new HashMap<>();
        first.values().forEach(url -> perWorker.merge(url, 1L, Long::sum));
        assertThat(perWorker).hasSize(20);
        assertThat(perWorker.values()).allSatisfy(n -> assertThat(n).isBetween(KEYS / 20 * 8 / 10L, KEYS / 20 * 12 / 10L));
    }

    @Test
    void routesOnlyToCompatibleWorkersThatOfferTheTargetAndLetTheCallerIn() {
        WorkerStatus open = worker(0, "1.0.0", Visibility.PUBLIC);
        WorkerStatus internal = worker(1, "1.0.0", Visibility.INTERNAL);
        WorkerStatus external = worker(2, "1.0.0", Visibility.EXTERNAL);
        WorkerStatus rejected = new WorkerStatus(worker(3, "2.0.0", Visibility.PUBLIC).endpoint(),
                WorkerStatus.State.REJECTED, "version", worker(3, "2.0.0", Visibility.PUBLIC).info());
        WorkerEndpoint bare = WorkerEndpoint.of("127.0.0.9", 7999);
        WorkerStatus offersNothing = new WorkerStatus(bare, WorkerStatus.State.COMPATIBLE, "",
                Optional.of(WorkerInfo.of(bare, "1.0.0")));
        FleetSnapshot snap = snapshot(List.of(open, internal, external, rejected, offersNothing));

        Map<Caller, java.util.Set<WorkerEndpoint>> reached = new HashMap<>();
        for (int k = 0; k < 2_000; k++) {
            for (Caller caller : Caller.values()) {
                reached.computeIfAbsent(caller, c -> new java.util.HashSet<>())
                        .add(snap.route(SERVICE, "Place", caller, "k" + k).endpoint());
            }
        }
        assertThat(reached.get(Caller.INGRESS)).containsExactlyInAnyOrder(open.endpoint(), external.endpoint());
        assertThat(reached.get(Caller.INTERNAL)).containsExactlyInAnyOrder(open.endpoint(), internal.endpoint());
        assertThatThrownBy(() -> snap.route(SERVICE, "Cancel", Caller.INGRESS, "k"))
                .isInstanceOfSatisfying(TargetLookupException.class,
                        e -> assertThat(e.reason()).isEqualTo(TargetLookupException.Reason.NOT_FOUND));
    }

    @Test
    void routingNeedsNoProtobufOnTheClassPath() throws Exception {
        java.net.URL api = FleetSnapshot.class.getProtectionDomain().getCodeSource().getLocation();
        java.net.URL tests = RoutingWithoutProtobuf.class.getProtectionDomain().getCodeSource().getLocation();
        try (java.net.URLClassLoader alone = new java.net.URLClassLoader(new java.net.URL[] {api, tests},
                ClassLoader.getPlatformClassLoader())) {
            assertThatThrownBy(() -> alone.loadClass("com.google.protobuf.Message"))
                    .isInstanceOf(ClassNotFoundException.class);
            @SuppressWarnings("unchecked")
            java.util.function.Supplier<String> routing = (java.util.function.Supplier<String>) alone
                    .loadClass(RoutingWithoutProtobuf.class.getName()).getDeclaredConstructor().newInstance();
            assertThat(routing.get()).isEqualTo("grpc://127.0.0.1:7000");
        }
    }

    @Test
    void theWeightOfAKeyForAWorkerIsPinned() {
        // Golden values of the documented function: coordinators of different builds must route a key alike.
        long key = RendezvousHash.hash("customer-1");
        assertThat(key).isEqualTo(0xadf92b537b08cddaL);
        assertThat(RendezvousHash.weight(key, RendezvousHash.hash("grpc://127.0.0.1:7000"))).isEqualTo(0xab0ab00acfaf75e4L);
    }
}
