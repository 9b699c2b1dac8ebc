package dev.rollcall.core.internal.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** {@link ShownFleet}: workers joining and leaving keep URL order, and each stayer its status. */
class ShownFleetTest {

    private static WorkerStatus statusOf(ShownWorker t) {
        return new WorkerStatus(t.endpoint(), WorkerStatus.State.PENDING, "shown " + t.url(), Optional.empty());
    }

    @Test
    void joinersAndLeaversKeepUrlOrderAndEveryStayerKeepsItsStatus() {
        SplittableRandom r = new SplittableRandom(7);
        TreeMap<String, TestWorker> expected = new TreeMap<>();
        Map<ShownWorker, WorkerStatus> shownAs = new HashMap<>();
        for (int port = 7000; port < 7100; port++) {
            TestWorker t = new TestWorker(WorkerEndpoint.of("127.0.0." + (1 + r.nextInt(3)), port));
            expected.put(t.url(), t);
            shownAs.put(t, statusOf(t));
        }
        ShownFleet fleet = new ShownFleet();
        List<TestWorker> all = new ArrayList<>(expected.values());
        all.forEach(t -> t.shownState().status = shownAs.get(t));
        fleet.reset(all);
        for (int round = 0; round < 200; round++) {
            List<ShownWorker> left = new ArrayList<>();
            List<ShownWorker> joined = new ArrayList<>();
            for (TestWorker t : List.copyOf(expected.values())) {
                if (r.nextInt(15) == 0) {
                    left.add(t);
                    expected.remove(t.url());
                }
            }
            for (int n = r.nextInt(6); n > 0; n--) {
                // sometimes the address of one that just left: another worker at the same URL
                TestWorker t = !left.isEmpty() && r.nextBoolean()
                        ? new TestWorker(left.get(r.nextInt(left.size())).endpoint())
                        : new TestWorker(WorkerEndpoint.of("127.0.0." + (1 + r.nextInt(3)), 6990 + r.nextInt(130)));
                if (!expected.containsKey(t.url())) {
                    expected.put(t.url(), t);
                    joined.add(t);
                }
            }
            fleet.apply(joined, left);
            assertThat(fleet.workers()).as("round %d", round).containsExactlyElementsOf(expected.values());
            for (int i = 0; i < fleet.workers().size(); i++) {
                ShownWorker t = fleet.workers().get(i);
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
        TestWorker a = new TestWorker(WorkerEndpoint.of("127.0.0.1", 7001));
        TestWorker b = new TestWorker(WorkerEndpoint.of("127.0.0.1", 7002));
        ShownFleet fleet = new ShownFleet();
        a.shownState().status = statusOf(a);
        b.shownState().status = statusOf(b);
        fleet.reset(List.of(a, b));
        assertThat(fleet.versions()).isEmpty();

        a.answer("1.0.0", "ia", ServingState.SERVING);
        b.answer("1.0.0", "ib", ServingState.SERVING);
        fleet.show(0, a, statusOf(a));
        fleet.show(1, b, statusOf(b));
        assertThat(fleet.versions()).containsExactly("1.0.0");

        a.answer("2.0.0", "ia2", ServingState.SERVING);
        fleet.show(0, a, statusOf(a));
        assertThat(fleet.versions()).containsExactlyInAnyOrder("1.0.0", "2.0.0");

        fleet.apply(List.of(), List.of(b));
        assertThat(fleet.versions()).as("b, the last of 1.0.0, left").containsExactly("2.0.0");
    }
}
