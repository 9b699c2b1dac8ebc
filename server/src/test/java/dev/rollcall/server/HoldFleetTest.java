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
import dev.rollcall.testkit.faults.FaultProxy;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
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

    /** How long a close() that must wait is watched not returning: longer than a release takes. */
    private static final Duration QUIET = Duration.ofMillis(700);

    @Test
    void underExactDrainADrainingWorkersCloseWaitsForTheRemoteHoldAndReturnsOnceItEnds() throws Exception {
        try (ServedFleet fleet = ServedFleet.start(true, Map.of())) {
            RollcallWorker a = fleet.worker("1.0.0", Duration.ofSeconds(30));
            fleet.list(a);
            fleet.resolver.awaitWorkers(1, WAIT);
            await().atMost(WAIT).until(() -> a.coordinatorsHolding() == 1);
            Context.CancellableContext hold = Context.current().withCancellation();
            HoldFleetResponse held = hold.call(() -> FleetServiceGrpc.newBlockingStub(fleet.channel())
                    .holdFleet(HoldFleetRequest.getDefaultInstance()).next());
            assertThat(held.getSnapshot().getWorkersList()).hasSize(1);

            CompletableFuture<Void> closed = CompletableFuture.runAsync(a::close);
            fleet.resolver.await(s -> s.workers().isEmpty(), WAIT); // drained: a newer snapshot leaves it out
            await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> !closed.isDone());
            assertThat(a.coordinatorsHolding()).as("the remote hold keeps it").isOne();

            hold.cancel(null);
            closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(fleet.server.holds()).isZero();
        }
    }

    @Test
    void aHoldWhoseChannelIsShutDownNowLetsGo() throws Exception {
        try (ServedFleet fleet = ServedFleet.start(true, Map.of())) {
            RollcallWorker a = fleet.worker("1.0.0", Duration.ofSeconds(30));
            fleet.list(a);
            fleet.resolver.awaitWorkers(1, WAIT);
            await().atMost(WAIT).until(() -> a.coordinatorsHolding() == 1);
            ManagedChannel dying = fleet.channel();
            FleetServiceGrpc.newBlockingStub(dying).holdFleet(HoldFleetRequest.getDefaultInstance()).next();

            CompletableFuture<Void> closed = CompletableFuture.runAsync(a::close);
            fleet.resolver.await(s -> s.workers().isEmpty(), WAIT);
            await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> !closed.isDone());
            dying.shutdownNow();
            closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            await().atMost(WAIT).until(() -> fleet.server.holds() == 0);
        }
    }

    @Test
    void aHoldWhoseConnectionIsCutOrGoesSilentLetsGo() throws Exception {
        // A silent connection is found out by the service's keepalive ping going unanswered; 10 s is
        // the shortest keepalive time gRPC lets a server use.
        try (ServedFleet fleet = ServedFleet.start(false, Map.of("rollcall.serve.keepalive-time", "10s",
                "rollcall.serve.keepalive-timeout", "1s"));
             FaultProxy cut = FaultProxy.to(fleet.server.grpcAddress());
             FaultProxy silent = FaultProxy.to(fleet.server.grpcAddress())) {
            RollcallWorker a = fleet.worker("1.0.0");
            fleet.list(a);
            fleet.resolver.awaitWorkers(1, WAIT);
            for (FaultProxy proxy : new FaultProxy[] {cut, silent}) {
                ManagedChannel channel = fleet.channel(proxy.port());
                FleetServiceGrpc.newBlockingStub(channel).holdFleet(HoldFleetRequest.getDefaultInstance()).next();
            }
            assertThat(fleet.server.holds()).isEqualTo(2);
            cut.resetConnections();
            await().atMost(WAIT).until(() -> fleet.server.holds() == 1);
            silent.blackhole();
            await().atMost(WAIT).until(() -> fleet.server.holds() == 0);
        }
    }
}
