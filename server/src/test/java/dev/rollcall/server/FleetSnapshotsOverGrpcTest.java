package dev.rollcall.server;

import static dev.rollcall.server.ServedFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.FleetWorker;
import dev.rollcall.protocol.v1.FleetWorkerState;
import dev.rollcall.protocol.v1.GetFleetRequest;
import dev.rollcall.protocol.v1.WatchFleetRequest;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * GetFleet and WatchFleet against a real resolver over real workers: what a scheduler reads
 * (compatible and excluded workers with reasons, the selection, the counts, zones), numbers that
 * say nothing was missed, a worker that leaves discovery gone within one publish, and peer text
 * that arrives escaped.
 */
class FleetSnapshotsOverGrpcTest {

    @Test
    void getFleetListsCompatibleAndExcludedWorkersWithReasonsSelectionAndCounts() throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker good = fleet.worker("1.2.0", "topology.kubernetes.io/zone", "eu-1", "zone", "ignored");
            RollcallWorker zoned = fleet.worker("1.3.0", "zone", "eu-2");
            RollcallWorker old = fleet.worker("0.9.0");
            fleet.list(good, zoned, old);
            fleet.resolver.await(s -> s.counts().compatible() == 2 && s.counts().rejected() == 1, WAIT);

            FleetSnapshot got = fleet.blocking().getFleet(GetFleetRequest.getDefaultInstance());

            assertThat(got.getServiceInstanceId()).isEqualTo(fleet.server.instanceId());
            assertThat(got.getNumber()).isEqualTo(fleet.resolver.pin().number());
            assertThat(got.getWorkersList()).extracting(FleetWorker::getUrl)
                    .containsExactly(sorted(good.endpoint().url(), zoned.endpoint().url()));
            FleetWorker first = byUrl(got.getWorkersList(), good.endpoint().url());
            assertThat(first.getVersion()).isEqualTo("1.2.0");
            assertThat(first.getInstanceId()).isNotEmpty();
            assertThat(first.getState()).isEqualTo(FleetWorkerState.FLEET_WORKER_STATE_COMPATIBLE);
            assertThat(first.getZone()).as("the Kubernetes label wins over zone").isEqualTo("eu-1");
            assertThat(first.getLabelsMap()).containsEntry("zone", "ignored");
            assertThat(first.getReason()).isEmpty();
            assertThat(byUrl(got.getWorkersList(), zoned.endpoint().url()).getZone()).isEqualTo("eu-2");
            assertThat(got.getExcludedList()).singleElement().satisfies(w -> {
                assertThat(w.getUrl()).isEqualTo(old.endpoint().url());
                assertThat(w.getState()).isEqualTo(FleetWorkerState.FLEET_WORKER_STATE_REJECTED);
                assertThat(w.getReason()).contains("version 0.9.0 is not 1.x");
                assertThat(w.getVersion()).isEqualTo("0.9.0");
            });
            assertThat(got.getCounts().getCandidates()).isEqualTo(3);
            assertThat(got.getCounts().getCompatible()).isEqualTo(2);
            assertThat(got.getCounts().getRejected()).isEqualTo(1);
            assertThat(got.getSelection().getCohortsMap()).containsEntry("1.2.0", 1).containsEntry("1.3.0", 1)
                    .containsEntry("0.9.0", 1);
            assertThat(got.getSelection().getPolicy()).isEqualTo(fleet.resolver.pin().selection().policy());
            assertThat(got.getStaleSinceUnixMillis()).isZero();
            assertThat(got.getDiscoveryProblem()).isEmpty();
        }
    }

    @Test
    void watchFleetSendsTheCurrentSnapshotThenEveryPublishNumberedByOneAndDropsALeaverWithinOnePublish()
            throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            RollcallWorker b = fleet.worker("1.0.1");
            fleet.list(a);
            fleet.resolver.awaitWorkers(1, WAIT);
            List<FleetSnapshot> seen = new CopyOnWriteArrayList<>();
            FleetServiceGrpc.newStub(fleet.channel()).watchFleet(WatchFleetRequest.getDefaultInstance(),
                    collect(seen));
            await().atMost(WAIT).until(() -> !seen.isEmpty());
            assertThat(seen.get(0).getNumber()).as("the current snapshot at once")
                    .isEqualTo(fleet.resolver.pin().number());

            fleet.list(a, b);
            fleet.resolver.awaitWorkers(2, WAIT);
            long joined = fleet.resolver.pin().number();
            await().atMost(WAIT).until(() -> last(seen).getNumber() >= joined);
            fleet.list(b);
            long left = fleet.resolver.await(s -> s.workers().size() == 1 && s.status(a.endpoint().url()).isEmpty(),
                    WAIT).number();
            await().atMost(WAIT).until(() -> last(seen).getNumber() >= left);

            for (int i = 1; i < seen.size(); i++) {
                assertThat(seen.get(i).getNumber()).as("a prompt reader misses none")
                        .isEqualTo(seen.get(i - 1).getNumber() + 1);
            }
            FleetSnapshot afterLeave = seen.stream().filter(s -> s.getNumber() == left).findFirst().orElseThrow();
            assertThat(afterLeave.getWorkersList()).extracting(FleetWorker::getUrl)
                    .containsExactly(b.endpoint().url());
            assertThat(afterLeave.getExcludedList()).extracting(FleetWorker::getUrl)
                    .doesNotContain(a.endpoint().url());
            assertThat(seen).extracting(FleetSnapshot::getServiceInstanceId).containsOnly(fleet.server.instanceId());
        }
    }

    @Test
    void aLabelOrVersionWithControlCharactersArrivesEscaped() throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker labelled = fleet.worker("1.0.0");
            RollcallWorker hostileVersion = fleet.worker("1.0.0\u001b[31m");
            // The resolver refuses a worker's own answer with control characters; a registry's labels it keeps.
            WorkerEndpoint hostileLabels = new WorkerEndpoint("127.0.0.1", labelled.endpoint().port(), false,
                    Map.of("team", "red\u001b[2J\nforged line", "zone", "eu\r1"));
            fleet.discovery.push(List.of(hostileLabels, hostileVersion.endpoint()));
            fleet.resolver.await(s -> s.counts().candidates() == 2 && s.counts().pending() == 0, WAIT);

            FleetSnapshot got = fleet.blocking().getFleet(GetFleetRequest.getDefaultInstance());

            assertThat(got.getWorkersList()).singleElement().satisfies(w -> {
                assertThat(w.getUrl()).isEqualTo(hostileLabels.url());
                assertThat(w.getLabelsMap()).containsEntry("team", "red\\u001b[2J\\nforged line");
                assertThat(w.getZone()).isEqualTo("eu\\r1");
            });
            assertThat(got.getExcludedList()).singleElement().satisfies(w -> {
                assertThat(w.getUrl()).isEqualTo(hostileVersion.endpoint().url());
                assertThat(w.getVersion() + w.getReason()).as(w.toString()).doesNotContain("\u001b");
            });
        }
    }

    static StreamObserver<FleetSnapshot> collect(List<FleetSnapshot> into) {
        return new StreamObserver<>() {
            @Override
            public void onNext(FleetSnapshot value) {
                into.add(value);
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        };
    }

    static FleetSnapshot last(List<FleetSnapshot> seen) {
        return seen.get(seen.size() - 1);
    }

    private static FleetWorker byUrl(List<FleetWorker> workers, String url) {
        return workers.stream().filter(w -> w.getUrl().equals(url)).findFirst().orElseThrow();
    }

    private static String[] sorted(String... urls) {
        java.util.Arrays.sort(urls);
        return urls;
    }
}
