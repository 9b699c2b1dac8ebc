package dev.rollcall.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.Capabilities;
import dev.rollcall.protocol.v1.Capability;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A worker's capabilities on the wire, seen by a coordinator's {@code WatchWorkerInfo} stream on
 * loopback: the builder's are in the first answer (field 9); a change is pushed at once as a new
 * answer with a higher revision; setting the same ones again sends nothing. The builder refuses a
 * bad capability naming it.
 */
class WorkerCapabilitiesTest {

    private static Capability wire(String name, String version) {
        return Capability.newBuilder().setName(name).setVersion(version).build();
    }

    @Test
    void aChangeOfCapabilitiesIsPushedWithAHigherRevisionAndTheSameOnesAgainAreNot() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0")
                .capabilities("plan-protocol=3", "udf:geo_distance").start();
             TestCoordinator coordinator = TestCoordinator.watch(worker.port(), "")) {
            WorkerInfoResponse first = coordinator.awaitAnswer(a -> true);
            assertThat(first.getCapabilitiesList())
                    .containsExactly(wire("plan-protocol", "3"), wire("udf:geo_distance", ""));

            worker.capabilities(Capabilities.of("plan-protocol=4"));
            WorkerInfoResponse changed = coordinator.awaitAnswer(a -> a.getRevision() != first.getRevision());
            assertThat(changed.getRevision()).isGreaterThan(first.getRevision());
            assertThat(changed.getCapabilitiesList()).containsExactly(wire("plan-protocol", "4"));

            worker.capabilities(Capabilities.of("plan-protocol=4"));
            // A marker: once its answer arrives, anything the repeat had sent would have arrived before it.
            worker.labels(Map.of("marker", "1"));
            WorkerInfoResponse marked = coordinator.awaitAnswer(a -> a.getLabelsMap().containsKey("marker"));
            assertThat(coordinator.answers()).extracting(WorkerInfoResponse::getRevision)
                    .containsExactly(first.getRevision(), changed.getRevision(), marked.getRevision());
            assertThat(marked.getCapabilitiesList()).containsExactly(wire("plan-protocol", "4"));
        }
    }

    @Test
    void theBuilderRefusesABadCapabilityNamingIt() {
        assertThatThrownBy(() -> RollcallWorker.builder().capabilities("udf:geo distance"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capability name 'udf:geo distance' is not letters, digits and . _ : / -"
                        + " (starting with a letter or digit)");
        assertThatThrownBy(() -> RollcallWorker.builder().capabilities("datafusion=55.0.1", "datafusion=55.1"))
                .hasMessage("capability 'datafusion' is given twice ('datafusion=55.0.1' and 'datafusion=55.1')");
        assertThatThrownBy(() -> RollcallWorker.builder().capabilities("plan-protocol=three\u001b[31m"))
                .hasMessage("capability 'plan-protocol': version 'three\\u001b[31m' is not a version"
                        + " (1, 1.2 or 1.2.3, then an optional -pre.release and +build)");
    }
}
