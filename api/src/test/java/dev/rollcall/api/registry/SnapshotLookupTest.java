package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link FleetSnapshot#status(String)}: by URL, by instance id, by a URL spelled another way; and the
 * URL order lookups rely on, with and without {@link FleetSnapshot.Builder#previous} as a hint.
 */
class SnapshotLookupTest {

    private static WorkerStatus compatible(int port, String instanceId) {
        WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", port);
        return new WorkerStatus(e, WorkerStatus.State.COMPATIBLE, "",
                Optional.of(new WorkerInfo(e, "1.0.0", instanceId, Map.of(), List.of())));
    }

    private static FleetSnapshot snapshot(WorkerStatus... statuses) {
        FleetSnapshot.Builder b = FleetSnapshot.builder(1).publishedAt(Instant.EPOCH);
        for (WorkerStatus s : statuses) {
            b.status(s);
        }
        return b.build();
    }

    @Test
    void findsEveryWorkerByUrlAndByInstanceIdAndNothingElse() {
        List<WorkerStatus> all = new java.util.ArrayList<>();
        for (int port = 7000; port < 7100; port++) {
            all.add(compatible(port, "id-" + port));
        }
        java.util.Collections.shuffle(all, new java.util.Random(7));
        FleetSnapshot s = snapshot(all.toArray(WorkerStatus[]::new));
        for (int port = 7000; port < 7100; port++) {
            String url = WorkerEndpoint.of("127.0.0.1", port).url();
            assertThat(s.status(url)).map(st -> st.endpoint().port()).contains(port);
            assertThat(s.status("id-" + port)).map(st -> st.endpoint().port()).contains(port);
        }
        assertThat(s.status("grpc://127.0.0.1:6999")).isEmpty();
        assertThat(s.status("grpc://127.0.0.1:7100")).isEmpty();
        assertThat(s.status("id-7100")).isEmpty();
        assertThat(s.status("not a url ://")).isEmpty();
        assertThat(snapshot().status("grpc://127.0.0.1:7000")).isEmpty();
    }

    @Test
    void aUrlSpelledAnotherWayIsFoundAndAUrlWinsOverAnInstanceIdSpelledTheSame() {
        WorkerStatus a = compatible(7000, "grpc://127.0.0.1:7001"); // an id that reads like b's URL
        WorkerStatus b = compatible(7001, "b");
        FleetSnapshot s = snapshot(a, b);
        assertThat(s.status("grpc://127.0.0.1:7001")).contains(b);
        assertThat(s.status("GRPC://127.0.0.1:7000/")).as("parsed and normalized").contains(a);
    }

    @Test
    void aUrlIsLookedUpAsAUrlOnlyAndAnIdWithSchemeLikeTextStillAsAnId() {
        WorkerStatus a = compatible(7000, "grpc://127.0.0.1:7005"); // reads like a URL of no candidate
        WorkerStatus b = compatible(7001, "pod://uid-1 ?");         // "://" but not a URL
        FleetSnapshot s = snapshot(a, b);
        assertThat(s.status("grpc://127.0.0.1:7005")).as("a URL, and no candidate has it").isEmpty();
        assertThat(s.status("pod://uid-1 ?")).contains(b);
    }

    /** Another implementation of the interface, answering as {@code to} does. */
    private static FleetSnapshot forwarding(FleetSnapshot to) {
        return (FleetSnapshot) java.lang.reflect.Proxy.newProxyInstance(FleetSnapshot.class.getClassLoader(),
                new Class<?>[] {FleetSnapshot.class}, (proxy, method, args) -> method.invoke(to, args));
    }

    private static List<Integer> ports(FleetSnapshot s) {
        return s.statuses().stream().map(st -> st.endpoint().port()).toList();
    }

    @Test
    void thePreviousSnapshotIsOnlyAHintStatusesInAnotherOrderAreStillSortedByUrl() {
        WorkerStatus a = compatible(7001, "a");
        WorkerStatus b = compatible(7002, "b");
        WorkerStatus c = compatible(7003, "c");
        WorkerStatus d = compatible(7004, "d");
        FleetSnapshot before = snapshot(a, b, c);

        // the same endpoints where they were before, one of them with a new status
        WorkerStatus bRejected = new WorkerStatus(b.endpoint(), WorkerStatus.State.REJECTED, "old", b.info());
        FleetSnapshot same = InternalSnapshots.buildAfter(FleetSnapshot.builder(2).statuses(List.of(a, bRejected, c)), before);
        assertThat(ports(same)).containsExactly(7001, 7002, 7003);
        assertThat(same.status(b.endpoint().url())).contains(bRejected);

        // as before up to a point, then out of order
        FleetSnapshot swapped = InternalSnapshots.buildAfter(FleetSnapshot.builder(3).statuses(List.of(a, c, b)), before);
        assertThat(ports(swapped)).containsExactly(7001, 7002, 7003);
        assertThat(swapped.status(c.endpoint().url())).contains(c);

        // a newcomer in front of the rest, and as many candidates as before but not the same
        FleetSnapshot joined = InternalSnapshots.buildAfter(FleetSnapshot.builder(4).statuses(List.of(d, a, b)), before);
        assertThat(ports(joined)).containsExactly(7001, 7002, 7004);
        assertThat(joined.status(d.endpoint().url())).contains(d);

        // fewer candidates than before, and a previous snapshot that is not one of the builder's
        FleetSnapshot fewer = InternalSnapshots.buildAfter(FleetSnapshot.builder(5).statuses(List.of(c, a)), before);
        assertThat(ports(fewer)).containsExactly(7001, 7003);
        FleetSnapshot other = InternalSnapshots.buildAfter(FleetSnapshot.builder(6).statuses(List.of(c, b, a)), forwarding(before));
        assertThat(ports(other)).containsExactly(7001, 7002, 7003);
    }

    @Test
    void theSelectionReportListsEveryCandidateLeftOutInUrlOrder() {
        WorkerStatus a = compatible(7001, "a");
        WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", 7000);
        WorkerStatus pending = new WorkerStatus(e, WorkerStatus.State.PENDING, "not probed yet", Optional.empty());
        WorkerEndpoint f = WorkerEndpoint.of("127.0.0.1", 7002);
        WorkerStatus rejected = new WorkerStatus(f, WorkerStatus.State.REJECTED, "version '2.0.0' is not 1.0.0",
                Optional.of(new WorkerInfo(f, "2.0.0", "f", Map.of(), List.of())));
        FleetSnapshot s = snapshot(rejected, a, pending);
        assertThat(s.selection().excluded()).containsExactly(pending, rejected);
        assertThat(s.selection()).as("made once, on first use").isSameAs(s.selection());
        assertThat(s.selection().cohorts()).containsExactly(Map.entry("1.0.0", 1), Map.entry("2.0.0", 1));
        assertThat(snapshot().selection().excluded()).isEmpty();
    }
}
