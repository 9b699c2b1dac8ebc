package dev.rollcall.server;

import static dev.rollcall.server.ServedFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.HoldFleetRequest;
import dev.rollcall.protocol.v1.HoldFleetResponse;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * HoldFleet: what can be held (the current snapshot, or one another hold keeps), what is refused and
 * how, and that a hold lasts exactly as long as its stream: a draining worker under exact drain
 * stops once the last remote hold ends, however it ends.
 */
class HoldFleetTest {

    @Test
    void numberZeroHoldsTheCurrentSnapshotAndTheHoldLastsUntilTheClientCancels() throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            fleet.list(a);
            long current = fleet.resolver.awaitWorkers(1, WAIT).number();
            Context.CancellableContext hold = Context.current().withCancellation();
            HoldFleetResponse answer = hold.call(() -> FleetServiceGrpc.newBlockingStub(fleet.channel())
                    .holdFleet(HoldFleetRequest.newBuilder().setNumber(0).build()).next());
            assertThat(answer.getSnapshot().getNumber()).isEqualTo(current);
            assertThat(answer.getSnapshot().getWorkersList()).hasSize(1);
            assertThat(fleet.server.holds()).as("the client half-closed after its request; the hold stays").isOne();
            hold.cancel(null);
            await().atMost(WAIT).until(() -> fleet.server.holds() == 0);
        }
    }

    @Test
    void aNumberNeitherCurrentNorHeldIsRefusedNamingItAndTheCurrentOne() throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            RollcallWorker b = fleet.worker("1.0.0");
            fleet.list(a);
            long stale = fleet.resolver.awaitWorkers(1, WAIT).number();
            fleet.list(a, b);
            long current = fleet.resolver.awaitWorkers(2, WAIT).number();
            Iterator<HoldFleetResponse> refused = FleetServiceGrpc.newBlockingStub(fleet.channel())
                    .holdFleet(HoldFleetRequest.newBuilder().setNumber(stale).build());
            assertThatThrownBy(refused::next).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                assertThat(e.getStatus().getDescription()).contains("snapshot " + stale + " ")
                        .contains("(" + current + ")");
            });
            await().atMost(WAIT).until(() -> fleet.server.holds() == 0);
        }
    }

    @Test
    void aHeldNumberCanBeHeldAgainAfterNewerOnesArePublished() throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            RollcallWorker b = fleet.worker("1.0.0");
            fleet.list(a);
            long first = fleet.resolver.awaitWorkers(1, WAIT).number();
            Context.CancellableContext one = Context.current().withCancellation();
            one.call(() -> FleetServiceGrpc.newBlockingStub(fleet.channel())
                    .holdFleet(HoldFleetRequest.newBuilder().setNumber(first).build()).next());
            fleet.list(a, b);
            fleet.resolver.awaitWorkers(2, WAIT);
            Context.CancellableContext two = Context.current().withCancellation();
            HoldFleetResponse again = two.call(() -> FleetServiceGrpc.newBlockingStub(fleet.channel())
                    .holdFleet(HoldFleetRequest.newBuilder().setNumber(first)
                            .setServiceInstanceId(fleet.server.instanceId()).build()).next());
            assertThat(again.getSnapshot().getNumber()).isEqualTo(first);
            assertThat(again.getSnapshot().getWorkersList()).hasSize(1);
            one.cancel(null);
            two.cancel(null);
            await().atMost(WAIT).until(() -> fleet.server.holds() == 0);
        }
    }

    @Test
    void anotherServiceInstanceIdIsRefused() throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            Iterator<HoldFleetResponse> refused = FleetServiceGrpc.newBlockingStub(fleet.channel())
                    .holdFleet(HoldFleetRequest.newBuilder().setServiceInstanceId("an-old-one").build());
            assertThatThrownBy(refused::next).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                assertThat(e.getStatus().getDescription()).contains("an-old-one").contains(fleet.server.instanceId());
            });
        }
    }
}
