package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link FleetSnapshot#status(String)}: by URL, by instance id, by a URL spelled another way. */
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
}
