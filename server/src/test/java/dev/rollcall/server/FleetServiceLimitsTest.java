package dev.rollcall.server;

import static dev.rollcall.server.ServedFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.HoldFleetRequest;
import dev.rollcall.protocol.v1.HoldFleetResponse;
import dev.rollcall.protocol.v1.WatchFleetRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The fleet API's limits: watchers and holds in all and per connection, refused with
 * {@code RESOURCE_EXHAUSTED} naming the limit's key and value, places freed when a stream ends, and
 * an oversized request refused.
 */
class FleetServiceLimitsTest {

    /** One stream as a test sees it: its first message, or how it ended; cancel() ends it. */
    static final class Stream<T> implements ClientResponseObserver<Object, T> {
        final CompletableFuture<T> first = new CompletableFuture<>();
        final CompletableFuture<Status> ended = new CompletableFuture<>();
        private ClientCallStreamObserver<Object> call;

        @Override
        public void beforeStart(ClientCallStreamObserver<Object> requestStream) {
            call = requestStream;
        }

        @Override
        public void onNext(T value) {
            first.complete(value);
        }

        @Override
        public void onError(Throwable t) {
            ended.complete(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            ended.complete(Status.OK);
        }

        void cancel() {
            call.cancel("the test ends it", null);
        }

        /** Waits until the stream was answered (true) or refused (false). */
        boolean served() {
            return CompletableFuture.anyOf(first, ended).thenApply(x -> first.isDone()).join();
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Stream<FleetSnapshot> watch(ManagedChannel channel) {
        Stream<FleetSnapshot> s = new Stream<>();
        FleetServiceGrpc.newStub(channel).watchFleet(WatchFleetRequest.getDefaultInstance(),
                (ClientResponseObserver) s);
        return s;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Stream<HoldFleetResponse> hold(ManagedChannel channel, HoldFleetRequest request) {
        Stream<HoldFleetResponse> s = new Stream<>();
        FleetServiceGrpc.newStub(channel).holdFleet(request, (ClientResponseObserver) s);
        return s;
    }

    private static void assertRefused(Stream<?> stream, String limit) {
        assertThat(stream.served()).as("refused").isFalse();
        Status status = stream.ended.join();
        assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(status.getDescription()).contains(limit);
    }

    @Test
    void watchersPastMaxWatchersAreRefusedNamingTheKeyAndAWatcherThatEndsFreesItsPlace() throws Exception {
        try (ServedFleet fleet = ServedFleet.start(false, Map.of("rollcall.serve.max-watchers", "3"))) {
            Stream<FleetSnapshot> first = watch(fleet.channel());
            assertThat(first.served()).isTrue();
            assertThat(watch(fleet.channel()).served()).isTrue();
            assertThat(watch(fleet.channel()).served()).isTrue();
            assertRefused(watch(fleet.channel()), "rollcall.serve.max-watchers=3");
            first.cancel();
            await().atMost(WAIT).until(() -> fleet.server.watchers() == 2);
            assertThat(watch(fleet.channel()).served()).as("the place the first one left").isTrue();
        }
    }

    @Test
    void watchersPastTheLimitPerConnectionAreRefusedNamingTheKeyWhileOtherConnectionsAreServed() throws Exception {
        try (ServedFleet fleet = ServedFleet.start(false, Map.of("rollcall.serve.max-watchers-per-connection", "2"))) {
            ManagedChannel one = fleet.channel();
            assertThat(watch(one).served()).isTrue();
            assertThat(watch(one).served()).isTrue();
            assertRefused(watch(one), "rollcall.serve.max-watchers-per-connection=2");
            assertThat(watch(fleet.channel()).served()).as("another connection").isTrue();
            assertThat(fleet.server.watchers()).isEqualTo(3);
        }
    }

    @Test
    void holdsPastMaxHoldsAndPastTheLimitPerConnectionAreRefusedNamingTheKey() throws Exception {
        try (ServedFleet fleet = ServedFleet.start(false, Map.of("rollcall.serve.max-holds", "3",
                "rollcall.serve.max-holds-per-connection", "2"))) {
            HoldFleetRequest current = HoldFleetRequest.getDefaultInstance();
            ManagedChannel one = fleet.channel();
            Stream<HoldFleetResponse> first = hold(one, current);
            assertThat(first.served()).isTrue();
            assertThat(hold(one, current).served()).isTrue();
            assertRefused(hold(one, current), "rollcall.serve.max-holds-per-connection=2");
            ManagedChannel two = fleet.channel();
            assertThat(hold(two, current).served()).isTrue();
            assertRefused(hold(two, current), "rollcall.serve.max-holds=3");
            first.cancel();
            await().atMost(WAIT).until(() -> fleet.server.holds() == 2);
            assertThat(hold(two, current).served()).as("the place the first one left").isTrue();
        }
    }

    @Test
    void anOversizedRequestIsRefusedAndHoldsNothing() throws Exception {
        try (ServedFleet fleet = ServedFleet.start(false, Map.of("rollcall.serve.max-request-bytes", "64"))) {
            Stream<HoldFleetResponse> big = hold(fleet.channel(),
                    HoldFleetRequest.newBuilder().setServiceInstanceId("x".repeat(100)).build());
            assertRefused(big, "rollcall.serve.max-request-bytes=64");
            await().atMost(WAIT).until(() -> fleet.server.holds() == 0);
            assertThat(hold(fleet.channel(), HoldFleetRequest.getDefaultInstance()).served())
                    .as("a request within the bound").isTrue();
        }
    }
}
