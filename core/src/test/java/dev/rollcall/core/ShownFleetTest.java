package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.WorkerStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** {@link ShownFleet}: workers joining and leaving keep URL order, and each stayer its status. */
class ShownFleetTest {

    private static WorkerStatus statusOf(TrackedWorker t) {
        return new WorkerStatus(t.endpoint(), WorkerStatus.State.PENDING, "shown " + t.url, Optional.empty());
    }

    @Test
    void joinersAndLeaversKeepUrlOrderAndEveryStayerKeepsItsStatus() {
        SplittableRandom r = new SplittableRandom(7);
        TreeMap<String, TrackedWorker> expected = new TreeMap<>();
        Map<TrackedWorker, WorkerStatus> shownAs = new java.util.HashMap<>();
        for (int port = 7000; port < 7100; port++) {
            TrackedWorker t = new TrackedWorker(WorkerEndpoint.of("127.0.0." + (1 + r.nextInt(3)), port));
            expected.put(t.url, t);
            shownAs.put(t, statusOf(t));
        }
        ShownFleet fleet = new ShownFleet();
        List<TrackedWorker> all = new ArrayList<>(expected.values());
        all.forEach(t -> t.shown = shownAs.get(t));
        fleet.reset(all);
        for (int round = 0; round < 200; round++) {
            List<TrackedWorker> left = new ArrayList<>();
            List<TrackedWorker> joined = new ArrayList<>();
            for (TrackedWorker t : List.copyOf(expected.values())) {
                if (r.nextInt(15) == 0) {
                    left.add(t);
                    expected.remove(t.url);
                }
            }
            for (int n = r.nextInt(6); n > 0; n--) {
                // sometimes the address of one that just left: another worker at the same URL
                TrackedWorker t = !left.isEmpty() && r.nextBoolean()
                        ? new TrackedWorker(left.get(r.nextInt(left.size())).endpoint())
                        : new TrackedWorker(WorkerEndpoint.of("127.0.0." + (1 + r.nextInt(3)), 6990 + r.nextInt(130)));
                if (!expected.containsKey(t.url)) {
                    expected.put(t.url, t);
                    joined.add(t);
                }
            }
            fleet.apply(joined, left);
            assertThat(fleet.workers()).as("round %d", round).containsExactlyElementsOf(expected.values());
            for (int i = 0; i < fleet.workers().size(); i++) {
                TrackedWorker t = fleet.workers().get(i);
                assertThat(fleet.indexOf(t)).isEqualTo(i);
                if (joined.contains(t)) {
                    assertThat(fleet.statuses().get(i)).as("a joiner is shown once a build sets it").isNull();
                    shownAs.put(t, statusOf(t));
                    fleet.show(i, t, shownAs.get(t));
                } else {
                    assertThat(fleet.statuses().get(i)).isSameAs(shownAs.get(t));
                }
            }
            left.forEach(t -> assertThat(fleet.indexOf(t)).as("left").isEqualTo(-1));
        }
    }

    @Test
    void countsTheVersionsTheShownWorkersAnsweredWith() {
        TrackedWorker a = new TrackedWorker(WorkerEndpoint.of("127.0.0.1", 7001));
        TrackedWorker b = new TrackedWorker(WorkerEndpoint.of("127.0.0.1", 7002));
        ShownFleet fleet = new ShownFleet();
        a.shown = statusOf(a);
        b.shown = statusOf(b);
        fleet.reset(List.of(a, b));
        assertThat(fleet.versions()).isEmpty();

        a.answered(new WorkerInfo(a.endpoint(), "1.0.0", "ia", Map.of(), List.of()), ServingState.SERVING, 1);
        b.answered(new WorkerInfo(b.endpoint(), "1.0.0", "ib", Map.of(), List.of()), ServingState.SERVING, 1);
        fleet.show(0, a, statusOf(a));
        fleet.show(1, b, statusOf(b));
        assertThat(fleet.versions()).containsExactly("1.0.0");

        a.answered(new WorkerInfo(a.endpoint(), "2.0.0", "ia2", Map.of(), List.of()), ServingState.SERVING, 2);
        fleet.show(0, a, statusOf(a));
        assertThat(fleet.versions()).containsExactlyInAnyOrder("1.0.0", "2.0.0");

        fleet.apply(List.of(), List.of(b));
        assertThat(fleet.versions()).as("b, the last of 1.0.0, left").containsExactly("2.0.0");
    }
}
