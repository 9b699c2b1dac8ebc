package dev.rollcall.server.internal.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.protocol.v1.FleetWorkerState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The encoding that every watcher is sent: a publish encodes only the workers whose status changed
 * and copies the others, and the bytes it splices together read back as the same snapshot as a
 * fresh encoding of it, in the same order.
 */
class SnapshotEncoderTest {

    private static final int WORKERS = 1_000;

    private static WorkerStatus status(int i, String version, State state) {
        WorkerEndpoint e = new WorkerEndpoint("10.0." + (i / 250) + "." + (i % 250 + 1), 7000, false,
                Map.of("zone", "z" + (i % 3)));
        return new WorkerStatus(e, state, state == State.COMPATIBLE ? "" : "version " + version + " is not 1.x",
                Optional.of(new WorkerInfo(e, version, "instance-" + i, Map.of("rack", "r" + i), List.of())));
    }

    private static dev.rollcall.protocol.v1.FleetSnapshot parse(EncodedSnapshot e) throws Exception {
        return dev.rollcall.protocol.v1.FleetSnapshot.parseFrom(e.bytes());
    }

    @Test
    void aPublishThatChangesOneWorkerEncodesOnlyThatOneAndReadsBackAsAFreshEncoding() throws Exception {
        List<WorkerStatus> statuses = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            statuses.add(status(i, i % 10 == 0 ? "0.9.0" : "1.0.0", i % 10 == 0 ? State.REJECTED : State.COMPATIBLE));
        }
        SnapshotEncoder encoder = new SnapshotEncoder("service-1");
        encoder.encode(FleetSnapshot.builder(1).statuses(statuses).build());
        assertThat(encoder.entriesEncoded()).isEqualTo(WORKERS);

        statuses.set(500, status(500, "1.1.0", State.COMPATIBLE)); // a rejected worker restarted on 1.1.0
        FleetSnapshot second = FleetSnapshot.builder(2).statuses(statuses).build();
        EncodedSnapshot spliced = encoder.encode(second);

        assertThat(encoder.entriesEncoded()).as("entries encoded by the second publish").isEqualTo(WORKERS + 1);
        dev.rollcall.protocol.v1.FleetSnapshot read = parse(spliced);
        assertThat(read).isEqualTo(parse(new SnapshotEncoder("service-1").encodeAlone(second)));
        assertThat(read.getNumber()).isEqualTo(2);
        assertThat(read.getWorkersCount()).isEqualTo(second.workers().size());
        assertThat(read.getExcludedCount()).as("every tenth rejected, 500 now accepted")
                .isEqualTo(WORKERS / 10 - 1);
        assertThat(read.getWorkersList()).extracting(w -> w.getUrl())
                .containsExactlyElementsOf(second.workers().stream().map(w -> w.endpoint().url()).toList());
        assertThat(read.getWorkersList()).filteredOn(w -> w.getInstanceId().equals("instance-500")).singleElement()
                .satisfies(w -> assertThat(w.getVersion()).isEqualTo("1.1.0"));
    }

    @Test
    void aPublishsChangeMessageCarriesOnlyTheEntriesThatChangedAndTheUrlsThatLeftSinceThePreviousPublish()
            throws Exception {
        List<WorkerStatus> statuses = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            statuses.add(status(i, "1.0.0", State.COMPATIBLE));
        }
        SnapshotEncoder encoder = new SnapshotEncoder("service-1");
        assertThat(encoder.encode(FleetSnapshot.builder(0).statuses(statuses).build()).changes())
                .as("no change message on the first snapshot").isNull();
        assertThat(encoder.encode(FleetSnapshot.builder(1).statuses(statuses).build()).changes())
                .as("nor against snapshot 0: base_number 0 means whole").isNull();

        statuses.set(500, status(500, "0.9.0", State.REJECTED));
        statuses.set(501, status(501, "1.0.0", State.COMPATIBLE)); // a new object, the same entry
        String leaver = statuses.remove(WORKERS - 1).endpoint().url();
        FleetSnapshot second = FleetSnapshot.builder(2).statuses(statuses).build();
        EncodedSnapshot encoded = encoder.encode(second);

        assertThat(encoded.base()).isEqualTo(1);
        assertThat(encoded.bytesAfter(1)).isSameAs(encoded.changes());
        assertThat(encoded.bytesAfter(0)).as("a stream that holds another number").isSameAs(encoded.bytes());
        dev.rollcall.protocol.v1.FleetSnapshot changes = dev.rollcall.protocol.v1.FleetSnapshot
                .parseFrom(encoded.changes());
        dev.rollcall.protocol.v1.FleetSnapshot whole = parse(encoded);
        assertThat(changes.getBaseNumber()).isEqualTo(1);
        assertThat(changes.getWorkersList()).isEmpty();
        assertThat(changes.getExcludedList()).singleElement()
                .satisfies(w -> assertThat(w.getInstanceId()).isEqualTo("instance-500"));
        assertThat(changes.getRemovedUrlsList()).containsExactly(leaver);
        assertThat(changes.toBuilder().clearBaseNumber().clearRemovedUrls().clearExcluded().build())
                .as("everything not per worker, whole").isEqualTo(whole.toBuilder().clearWorkers().clearExcluded().build());
        assertThat(whole.getBaseNumber()).isZero();
        assertThat(whole.getRemovedUrlsList()).isEmpty();
    }

    private static WorkerStatus capable(int i, String... capabilities) {
        WorkerEndpoint e = new WorkerEndpoint("10.1." + (i / 250) + "." + (i % 250 + 1), 7000, false, Map.of());
        return new WorkerStatus(e, State.COMPATIBLE, "", Optional.of(new WorkerInfo(e, "1.0.0", "instance-" + i,
                Map.of(), List.of(), Capabilities.of(capabilities))));
    }

    @Test
    void narrowedPublishesReuseTheEntriesOfLackingWorkersThatDidNotChangeAndCarryNoneOfThemAsChanged()
            throws Exception {
        Requirements geo = Requirements.of("udf:geo_distance");
        List<WorkerStatus> statuses = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            statuses.add(i % 10 == 0 ? capable(i, "udf:geo_distance") : capable(i));
        }
        SnapshotEncoder encoder = new SnapshotEncoder("service-1");
        encoder.encode(FleetSnapshot.builder(1).statuses(statuses).build().requiring(geo));
        assertThat(encoder.entriesEncoded()).isEqualTo(WORKERS);

        statuses.set(501, capable(501, "udf:geo_distance")); // one worker gains it
        FleetSnapshot second = FleetSnapshot.builder(2).statuses(statuses).build().requiring(geo);
        EncodedSnapshot encoded = encoder.encode(second);

        assertThat(encoder.entriesEncoded()).as("entries encoded by the second narrowed publish")
                .isEqualTo(WORKERS + 1);
        dev.rollcall.protocol.v1.FleetSnapshot changes = dev.rollcall.protocol.v1.FleetSnapshot
                .parseFrom(encoded.changes());
        assertThat(changes.getExcludedList()).as("no lacking worker changed").isEmpty();
        assertThat(changes.getWorkersList()).singleElement()
                .satisfies(w -> assertThat(w.getInstanceId()).isEqualTo("instance-501"));
        dev.rollcall.protocol.v1.FleetSnapshot whole = parse(encoded);
        assertThat(whole).isEqualTo(parse(new SnapshotEncoder("service-1").encodeAlone(second)));
        assertThat(whole.getCounts().getLacksRequirement()).isEqualTo(WORKERS - WORKERS / 10 - 1);
        assertThat(whole.getExcludedList()).allSatisfy(w -> {
            assertThat(w.getState()).isEqualTo(FleetWorkerState.FLEET_WORKER_STATE_LACKS_REQUIREMENT);
            assertThat(w.getReason()).isEqualTo("lacks udf:geo_distance");
        });
        assertThat(whole.getWorkersList()).allSatisfy(w -> assertThat(w.getCapabilitiesList())
                .extracting(dev.rollcall.protocol.v1.Capability::getName).containsExactly("udf:geo_distance"));
    }

    @Test
    void aHoldResponseCarriesTheSnapshotBytesAsTheyAre() throws Exception {
        EncodedSnapshot e = new SnapshotEncoder("service-1").encodeAlone(FleetSnapshot.builder(7)
                .status(status(1, "1.0.0", State.COMPATIBLE)).build());
        dev.rollcall.protocol.v1.HoldFleetResponse hold = dev.rollcall.protocol.v1.HoldFleetResponse
                .parseFrom(e.holdResponse());
        assertThat(hold.getSnapshot()).isEqualTo(parse(e));
    }
}
