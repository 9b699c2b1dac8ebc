package dev.rollcall.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Result;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What a worker's server takes from a client of its port: bounded, and refused with the limit's key. */
class WorkerLimitsTest {

    private static final long WAIT_SECONDS = 10;
    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void closeChannels() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private ManagedChannel channel(RollcallWorker worker) {
        ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", worker.port()).usePlaintext()
                .maxInboundMessageSize(16 << 20).build();
        channels.add(c);
        return c;
    }

    private static WorkerInfoRequest requestOf(int padding) {
        return WorkerInfoRequest.newBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
                .addField(99, UnknownFieldSet.Field.newBuilder()
                        .addLengthDelimited(ByteString.copyFrom(new byte[padding])).build())
                .build()).build();
    }

    private static WorkerServiceGrpc.WorkerServiceBlockingStub stub(ManagedChannel c) {
        return WorkerServiceGrpc.newBlockingStub(c).withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void anOversizedRequestToRollcallsOwnCallsIsRefusedNamingTheLimitAndItsKey() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().start()) {
            ManagedChannel c = channel(worker);
            assertThat(stub(c).workerInfo(requestOf(4_000)).getInstanceId()).as("within the default 4096 bytes")
                    .isEqualTo(worker.instanceId());
            assertThatThrownBy(() -> stub(c).workerInfo(requestOf(64 << 10)))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                        assertThat(e.getStatus().getDescription())
                                .contains("rollcall.v1.WorkerService/WorkerInfo")
                                .contains("rollcall.worker.max-request-bytes=4096");
                    });
            Iterator<WorkerInfoResponse> watch = stub(c).watchWorkerInfo(requestOf(64 << 10));
            assertThatThrownBy(watch::next).isInstanceOfSatisfying(StatusRuntimeException.class,
                    e -> assertThat(e.getStatus().getDescription()).contains("rollcall.worker.max-request-bytes"));
            assertThat(stub(c).workerInfo(WorkerInfoRequest.getDefaultInstance()).getInstanceId())
                    .as("the same connection goes on serving").isEqualTo(worker.instanceId());
        }
    }

    @Test
    void aCompressedRequestThatInflatesPastTheLimitIsRefused() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().start()) {
            ManagedChannel c = channel(worker);
            WorkerInfoRequest zeros = requestOf(1 << 20); // ~1 KB on the wire once gzipped
            assertThatThrownBy(() -> stub(c).withCompression("gzip").workerInfo(zeros))
                    .isInstanceOf(StatusRuntimeException.class);
            assertThat(stub(c).withCompression("gzip").workerInfo(requestOf(1_000)).getInstanceId())
                    .as("a small compressed request is fine").isEqualTo(worker.instanceId());
        }
    }

    @Test
    void reflectionRequestsAreBoundedAndThoseOfTheLimitsKeyCanRaiseIt() throws Exception {
        RollcallConfig raised = RollcallConfig.of(Map.of("rollcall.worker.max-request-bytes", "65536"));
        try (RollcallWorker small = RollcallWorker.builder().start();
             RollcallWorker large = RollcallWorker.builder().config(raised).start()) {
            ServerReflectionRequest big = ServerReflectionRequest.newBuilder()
                    .setFileContainingSymbol("x".repeat(8_000)).build();
            assertThat(reflect(channel(small), big)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(e.getStatus().getDescription()).contains("grpc.reflection.v1.ServerReflection")
                        .contains("rollcall.worker.max-request-bytes=4096");
            });
            assertThat(reflect(channel(large), big)).as("answered: symbol not found").isNull();
        }
    }

    /** Sends {@code request} over reflection; null when it was answered, else the failure. */
    private static Throwable reflect(ManagedChannel c, ServerReflectionRequest request) throws Exception {
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        StreamObserver<ServerReflectionRequest> out = ServerReflectionGrpc.newStub(c)
                .serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(ServerReflectionResponse value) {
                        outcome.complete(null);
                    }

                    @Override
                    public void onError(Throwable t) {
                        outcome.complete(t);
                    }

                    @Override
                    public void onCompleted() {
                        outcome.complete(null);
                    }
                });
        out.onNext(request);
        out.onCompleted();
        return outcome.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /** Answers an action with the size of its body. */
    private static final class BodySize extends NoOpFlightProducer {
        @Override
        public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
            listener.onNext(new Result(Integer.toString(action.getBody().length).getBytes()));
            listener.onCompleted();
        }
    }

    @Test
    void arrowFlightKeepsItsOwnLargeLimit() throws Exception {
        try (BufferAllocator allocator = new RootAllocator();
             RollcallWorker worker = RollcallWorker.builder().flightProducer(new BodySize()).start();
             FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", worker.port()))
                     .build()) {
            Iterator<Result> results = client.doAction(new Action("size", new byte[8 << 20]));
            assertThat(new String(results.next().getBody())).isEqualTo(Integer.toString(8 << 20));
        }
    }

    /** A watch stream on {@code c}: its first answer, or how it failed. */
    private static CompletableFuture<Object> watch(ManagedChannel c, List<ClientCall<?, ?>> open) {
        CompletableFuture<Object> first = new CompletableFuture<>();
        ClientCall<WorkerInfoRequest, WorkerInfoResponse> call =
                c.newCall(WorkerServiceGrpc.getWatchWorkerInfoMethod(), CallOptions.DEFAULT);
        open.add(call);
        ClientCalls.asyncServerStreamingCall(call, WorkerInfoRequest.getDefaultInstance(), new StreamObserver<>() {
            @Override
            public void onNext(WorkerInfoResponse value) {
                first.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                first.complete(t);
            }

            @Override
            public void onCompleted() {
                first.complete("completed");
            }
        });
        return first;
    }

    private static void assertRefused(CompletableFuture<Object> watch, String limit) throws Exception {
        assertThat(watch.get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(e.getStatus().getDescription()).contains(limit);
        });
    }

    @Test
    void watchStreamsPastTheLimitPerConnectionOrInAllAreRefusedNamingItsKeyAndAPlaceFreesWhenOneEnds()
            throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().maxWatchesPerConnection(2).maxWatches(3).start()) {
            ManagedChannel a = channel(worker);
            ManagedChannel b = channel(worker);
            List<ClientCall<?, ?>> open = new ArrayList<>();
            assertThat(watch(a, open).get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(WorkerInfoResponse.class);
            assertThat(watch(a, open).get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(WorkerInfoResponse.class);
            assertRefused(watch(a, open), "rollcall.worker.max-watches-per-connection=2");
            assertThat(watch(b, open).get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(WorkerInfoResponse.class);
            assertRefused(watch(b, open), "rollcall.worker.max-watches=3");
            assertThat(stub(b).workerInfo(WorkerInfoRequest.getDefaultInstance()).getInstanceId())
                    .as("the unary call still answers").isEqualTo(worker.instanceId());

            open.get(0).cancel("done watching", null);
            await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> worker.coordinatorsWatching() == 2);
            assertThat(watch(b, open).get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(WorkerInfoResponse.class);
        }
    }

    @Test
    void aWatchCountsFromItsStartEvenBeforeItsRequestArrives() throws Exception {
        WorkerInfoService service = WorkerInfoService.builder().maxWatchesPerConnection(2).build();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(service)
                .build().start();
        try {
            ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
            channels.add(c);
            for (int i = 0; i < 2; i++) { // streams that never send their request: held open, answered never
                ClientCall<WorkerInfoRequest, WorkerInfoResponse> silent =
                        c.newCall(WorkerServiceGrpc.getWatchWorkerInfoMethod(), CallOptions.DEFAULT);
                silent.start(new ClientCall.Listener<>() {
                }, new Metadata());
                silent.request(1);
            }
            stub(c).workerInfo(WorkerInfoRequest.getDefaultInstance()); // sends the silent streams' headers too
            await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> service.watchesHeld() == 2);
            assertThat(service.watchers()).as("no request, no watcher yet").isZero();

            assertRefused(watch(c, new ArrayList<>()), "rollcall.worker.max-watches-per-connection=2");
        } finally {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void theLimitsKeysReachTheWorker() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder()
                .config(RollcallConfig.of(Map.of("rollcall.worker.max-watches-per-connection", "1"))).start()) {
            ManagedChannel c = channel(worker);
            List<ClientCall<?, ?>> open = new ArrayList<>();
            assertThat(watch(c, open).get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(WorkerInfoResponse.class);
            assertRefused(watch(c, open), "rollcall.worker.max-watches-per-connection=1");
        }
    }

    @Test
    void aBadLimitFailsStartNamingItsKey() {
        for (String key : List.of("max-request-bytes", "max-watches", "max-watches-per-connection",
                "max-calls-per-connection")) {
            RollcallConfig bad = RollcallConfig.of(Map.of("rollcall.worker." + key, "0"));
            assertThatThrownBy(() -> RollcallWorker.builder().config(bad).start())
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("rollcall.worker." + key);
        }
        assertThatThrownBy(() -> RollcallWorker.builder().maxWatches(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxWatches 0");
    }
}
