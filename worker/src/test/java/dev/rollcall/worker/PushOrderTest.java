package dev.rollcall.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Pushed answers never go back in time, and no push is sent on the thread that made the change. */
class PushOrderTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static boolean hasLabel(WorkerInfoResponse r, String value) {
        return value.equals(r.getLabelsMap().get("round"));
    }

    /**
     * The interleaving of issue 34, made to happen: a labels change is chosen, its send to the first
     * coordinator is held (that coordinator then goes away), a drain is chosen and pushed meanwhile,
     * then the held send goes on. The other coordinator must never see SERVING after DRAINING.
     */
    @Test
    void aLabelsChangeRacingADrainNeverReachesACoordinatorAfterTheDrain() throws Exception {
        WorkerInfoService service = WorkerInfoService.builder().version("1.0.0").build();
        FakeWatch a = FakeWatch.open(service);
        FakeWatch b = FakeWatch.open(service);
        FakeWatch.Gate gate = new FakeWatch.Gate(r -> hasLabel(r, "1"));
        a.gate(gate);
        b.gate(gate);

        Thread relabel = new Thread(() -> service.labels(Map.of("round", "1")), "relabel");
        relabel.start();
        FakeWatch held = gate.awaitHeld();
        FakeWatch other = held == a ? b : a;
        held.cancel();
        service.state(ServingState.DRAINING);
        gate.release();
        relabel.join(WAIT.toMillis());
        service.labels(Map.of("round", "3")); // a marker: every earlier send to `other` is over once it arrives

        await().atMost(WAIT).until(() -> other.sent.stream().anyMatch(r -> hasLabel(r, "3")));
        List<WorkerInfoResponse> seen = other.sent;
        int drained = indexOfFirst(seen, ServingState.DRAINING);
        assertThat(drained).as("the drain reached the coordinator: %s", seen).isNotNegative();
        assertThat(seen.subList(drained, seen.size())).as("answers after the drain: %s", seen)
                .allSatisfy(r -> assertThat(r.getState())
                        .isEqualTo(dev.rollcall.protocol.v1.ServingState.DRAINING));
        assertThat(seen).extracting(WorkerInfoResponse::getRevision).as("revisions, in the order sent")
                .isSorted().doesNotHaveDuplicates().doesNotContain(0L);
    }

    private static int indexOfFirst(List<WorkerInfoResponse> seen, ServingState state) {
        for (int i = 0; i < seen.size(); i++) {
            if (seen.get(i).getState().name().equals(state.name())) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void aDrainReturnsWhileACoordinatorsSendIsHeld() throws Exception {
        WorkerInfoService service = WorkerInfoService.builder().build();
        FakeWatch stuck = FakeWatch.open(service);
        FakeWatch.Gate gate = new FakeWatch.Gate(r -> r.getState() == dev.rollcall.protocol.v1.ServingState.DRAINING);
        stuck.gate(gate);
        try {
            CompletableFuture<Void> drain = CompletableFuture.runAsync(() -> service.state(ServingState.DRAINING));
            drain.get(5, TimeUnit.SECONDS); // a send on the caller's thread would still be held here
            assertThat(gate.awaitHeld()).isSameAs(stuck);
            assertThat(gate.heldThread().getName()).startsWith("rollcall-worker-push");
        } finally {
            gate.release();
        }
        await().atMost(WAIT).until(() -> stuck.last().getState() == dev.rollcall.protocol.v1.ServingState.DRAINING);
    }

    @Test
    void everyDistinctAnswerHasAGreaterRevisionAndTheUnaryAnswerCarriesItToo() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.0.0").start()) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", worker.port()).usePlaintext().build();
            try {
                WorkerServiceGrpc.WorkerServiceBlockingStub stub = WorkerServiceGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS);
                WorkerInfoResponse first = stub.workerInfo(WorkerInfoRequest.getDefaultInstance());
                assertThat(stub.workerInfo(WorkerInfoRequest.getDefaultInstance()).getRevision())
                        .as("no change, no new revision").isEqualTo(first.getRevision()).isPositive();
                worker.labels(Map.of("zone", "b"));
                WorkerInfoResponse relabelled = stub.workerInfo(WorkerInfoRequest.getDefaultInstance());
                worker.drain();
                WorkerInfoResponse drained = stub.workerInfo(WorkerInfoRequest.getDefaultInstance());
                assertThat(List.of(first, relabelled, drained)).extracting(WorkerInfoResponse::getRevision)
                        .isSorted().doesNotHaveDuplicates();
                assertThat(drained.getHeartbeatMillis()).as("unary answers repeat nothing").isZero();
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
