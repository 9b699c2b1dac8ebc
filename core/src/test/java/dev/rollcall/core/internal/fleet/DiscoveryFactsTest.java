package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus.State;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What discovery itself knows about a worker's process: a new instance id means a restart in
 * place (noticed without a kept connection), a draining label takes it out of new work.
 */
class DiscoveryFactsTest extends TrackerHarness {

    private static WorkerEndpoint instance(WorkerEndpoint e, String id) {
        return e.withLabels(Map.of(WorkerEndpoint.INSTANCE_ID_LABEL, id));
    }

    @Test
    void aNewInstanceIdFromDiscoveryTakesTheWorkerOutAndProbesItAtOnce() {
        tracker(64);
        candidates(instance(a, "p1"), b);
        answer(a, "1.0.0", "p1");
        answer(b, "1.0.0", "i2");
        int probes = net.sent.size();

        candidates(instance(a, "p1"), b); // the same set again: nothing to do
        assertThat(net.sent).hasSize(probes);

        candidates(instance(a, "p2"), b);
        assertThat(state(a)).as("out until the new process answered").isEqualTo(State.PENDING);
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(b.url());
        assertThat(net.sent).as("probed at once, not at the next refresh").hasSize(probes + 1);

        answer(a, "2.0.0", "p2");
        assertThat(state(a)).as("the new process runs a version the policy rejects").isEqualTo(State.REJECTED);
    }

    @Test
    void aWorkerDiscoveryLabelsDrainingTakesNoNewWork() {
        tracker(64);
        candidates(a, b);
        answer(a, "1.0.0", "i1");
        answer(b, "1.0.0", "i2");

        candidates(a.withLabels(Map.of(WorkerEndpoint.STATE_LABEL, WorkerEndpoint.STATE_DRAINING)), b);
        assertThat(state(a)).isEqualTo(State.DRAINING);
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(b.url());

        candidates(a, b);
        assertThat(state(a)).as("label gone: in use again").isEqualTo(State.COMPATIBLE);
    }
}
