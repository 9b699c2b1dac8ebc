package dev.rollcall.server;

import static dev.rollcall.server.ServedFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.HoldFleetRequest;
import dev.rollcall.protocol.v1.WatchFleetRequest;
import dev.rollcall.testkit.ThreadCensus;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Closing a {@link FleetServer}: every watch ends with {@code UNAVAILABLE}, every hold lets go (a
 * draining worker under exact drain stops), its threads end, its port is free, and the resolver it
 * served keeps running.
 */
class FleetServerCloseTest {

    @Test
    void closeEndsWatchesLetsGoOfHoldsEndsItsThreadsAndFreesItsPort() throws Exception {
        ThreadCensus before = ThreadCensus.take();
        try (ServedFleet fleet = ServedFleet.start(true, Map.of())) {
            RollcallWorker a = fleet.worker("1.0.0", Duration.ofSeconds(30));
            fleet.list(a);
            fleet.resolver.awaitWorkers(1, WAIT);
            org.awaitility.Awaitility.await().atMost(WAIT).until(() -> a.coordinatorsHolding() == 1);
            CompletableFuture<Status> watchEnded = new CompletableFuture<>();
            FleetServiceGrpc.newStub(fleet.channel()).watchFleet(WatchFleetRequest.getDefaultInstance(),
                    new StreamObserver<FleetSnapshot>() {
                        @Override
                        public void onNext(FleetSnapshot value) {
                        }

                        @Override
                        public void onError(Throwable t) {
                            watchEnded.complete(Status.fromThrowable(t));
                        }

                        @Override
                        public void onCompleted() {
                            watchEnded.complete(Status.OK);
                        }
                    });
            FleetServiceGrpc.newBlockingStub(fleet.channel()).holdFleet(HoldFleetRequest.getDefaultInstance()).next();
            org.awaitility.Awaitility.await().atMost(WAIT).until(() -> fleet.server.watchers() == 1);
            CompletableFuture<Void> workerClosed = CompletableFuture.runAsync(a::close);
            fleet.resolver.await(s -> s.workers().isEmpty(), WAIT);

            int port = fleet.server.grpcAddress().getPort();
            fleet.server.close();

            assertThat(watchEnded.get(WAIT.toSeconds(), TimeUnit.SECONDS).getCode())
                    .isEqualTo(Status.Code.UNAVAILABLE);
            workerClosed.get(WAIT.toSeconds(), TimeUnit.SECONDS); // the hold let go with the server
            before.awaitNewThreadsEnded(WAIT, "rollcall-serve-");
            assertThat(fleet.resolver.pin().number()).as("the resolver still runs").isPositive();
            try (FleetServer again = FleetServer.builder(fleet.resolver).config(RollcallConfig.of(Map.of()))
                    .host("127.0.0.1").port(port).http(false).start()) {
                assertThat(again.grpcAddress().getPort()).as("the same port, bound again").isEqualTo(port);
            }
        }
    }
}
