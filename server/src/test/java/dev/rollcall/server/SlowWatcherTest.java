package dev.rollcall.server;

import static dev.rollcall.server.ServedFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.WatchFleetRequest;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.NettyChannelBuilder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Latest wins: a WatchFleet client that stops reading (its HTTP/2 window full) holds back neither
 * the resolver nor the other watchers, and when it reads again it gets the newest snapshot, not the
 * backlog of every one it missed.
 */
class SlowWatcherTest {

    private static final int CHANGES = 60;
    /** Labels big enough that a few snapshots fill a stalled client's window and the server's buffer. */
    private static final int PAD_LABELS = 30;

    @Test
    void aWatcherThatNeverReadsHoldsNobodyBackAndThenGetsTheNewestSnapshotNotABacklog() throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker w = fleet.worker("1.0.0");
            fleet.discovery.push(List.of(labelled(w, 0)));
            fleet.resolver.awaitWorkers(1, WAIT);

            ManagedChannel stuckChannel = NettyChannelBuilder.forAddress(fleet.server.grpcAddress()).usePlaintext()
                    .flowControlWindow(65_535).build(); // a fixed window: no auto-tuning to absorb the flood
            List<FleetSnapshot> stuck = new CopyOnWriteArrayList<>();
            ClientCall<WatchFleetRequest, FleetSnapshot> stuckCall = stuckChannel.newCall(
                    FleetServiceGrpc.getWatchFleetMethod(), CallOptions.DEFAULT);
            try {
                stuckCall.start(new ClientCall.Listener<>() {
                    @Override
                    public void onMessage(FleetSnapshot message) {
                        stuck.add(message);
                    }
                }, new Metadata());
                stuckCall.request(1); // and never again, until the end
                stuckCall.sendMessage(WatchFleetRequest.getDefaultInstance());
                stuckCall.halfClose();
                await().atMost(WAIT).until(() -> stuck.size() == 1);

                List<FleetSnapshot> prompt = new CopyOnWriteArrayList<>();
                FleetServiceGrpc.newStub(fleet.channel()).watchFleet(WatchFleetRequest.getDefaultInstance(),
                        FleetSnapshotsOverGrpcTest.collect(prompt));
                for (int rev = 1; rev <= CHANGES; rev++) {
                    fleet.discovery.push(List.of(labelled(w, rev)));
                    String expected = Integer.toString(rev);
                    await("the prompt watcher sees change " + rev).atMost(WAIT).until(() -> !prompt.isEmpty()
                            && expected.equals(FleetSnapshotsOverGrpcTest.last(prompt).getWorkers(0)
                            .getLabelsOrDefault("rev", "")));
                }
                long newest = fleet.resolver.pin().number();
                assertThat(FleetSnapshotsOverGrpcTest.last(prompt).getNumber()).isEqualTo(newest);
                assertThat(fleet.meters.get("rollcall.serve.skipped").functionCounter().count())
                        .as("snapshots superseded before the stuck watcher could take them").isPositive();

                stuckCall.request(Integer.MAX_VALUE);
                await().atMost(WAIT).until(() -> FleetSnapshotsOverGrpcTest.last(stuck).getNumber() == newest);
                assertThat(stuck.size() - 1).as("what the stuck watcher read after it resumed: what the transport"
                        + " had buffered, then the newest; not one per change").isLessThan(CHANGES / 2);
                for (int i = 1; i < stuck.size(); i++) {
                    assertThat(stuck.get(i).getNumber()).isGreaterThan(stuck.get(i - 1).getNumber());
                }
                assertThat(FleetSnapshotsOverGrpcTest.last(stuck).getWorkers(0).getLabelsOrThrow("rev"))
                        .isEqualTo(Integer.toString(CHANGES));
            } finally {
                stuckCall.cancel("test over", null);
                stuckChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    private static WorkerEndpoint labelled(RollcallWorker w, int rev) {
        Map<String, String> labels = new HashMap<>();
        labels.put("rev", Integer.toString(rev));
        for (int i = 0; i < PAD_LABELS; i++) {
            labels.put("pad-" + i, Integer.toString(rev).repeat(1000 / Integer.toString(rev).length()));
        }
        return new WorkerEndpoint("127.0.0.1", w.endpoint().port(), false, labels);
    }
}
