package dev.rollcall.it.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * {@code resolver.channel(endpoint)}: Arrow Flight over the connection the resolver verified the
 * worker on, against real workers; the resolver owns the channel's lifetime.
 */
class SharedChannelTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Schema SCHEMA = new Schema(List.of(Field.nullable("n", new ArrowType.Int(32, true))));
    @AutoClose
    private final Closer open = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();
    private final BufferAllocator allocator = closing(new RootAllocator());

    private <T extends AutoCloseable> T closing(T c) {
        return open.add(c);
    }

    private RollcallWorker worker() throws Exception {
        return closing(RollcallWorker.builder().version("1.0.0").flightProducer(new FiveRows(allocator)).start());
    }

    private WorkerResolver resolver(WorkerEndpoint... endpoints) throws Exception {
        WorkerResolver r = closing(WorkerResolver.builder().discovery(discovery).policy(w -> Verdict.accept())
                .fetchSchemas(false).build());
        discovery.push(List.of(endpoints));
        r.awaitWorkers(endpoints.length, WAIT);
        return r;
    }

    private int rows(ManagedChannel channel) throws Exception {
        try (FlightClient client = FlightGrpcUtils.createFlightClientWithSharedChannel(allocator, channel);
             FlightStream stream = client.getStream(new Ticket(new byte[] {1}))) {
            int n = 0;
            while (stream.next()) {
                n += stream.getRoot().getRowCount();
            }
            return n;
        }
    }

    /** The recipe: one record batch of 1,000,000 ints (4 MiB, one gRPC message of 4,125,145 bytes). */
    @Test
    void aFlightDoGetOfOneFourMebibyteBatchPassesOverTheSharedChannel() throws Exception {
        RollcallWorker a = closing(RollcallWorker.builder().version("1.0.0")
                .flightProducer(new OneBatch(allocator, MILLION)).start());
        WorkerResolver r = resolver(a.endpoint());
        ManagedChannel channel = r.channel(a.endpoint());
        try (FlightClient client = FlightGrpcUtils.createFlightClientWithSharedChannel(allocator, channel);
             FlightStream stream = client.getStream(new Ticket(new byte[] {1}))) {
            assertThat(stream.next()).isTrue();
            IntVector n = (IntVector) stream.getRoot().getVector("n");
            assertThat(stream.getRoot().getRowCount()).isEqualTo(MILLION);
            long sum = 0;
            for (int i = 0; i < MILLION; i++) {
                sum += n.get(i);
            }
            assertThat(sum).isEqualTo((long) MILLION * (MILLION - 1) / 2);
            assertThat(stream.next()).isFalse();
        }
        assertThat(r.workers()).as("the probes on the same connection are unaffected").hasSize(1);
    }

    /**
     * The answer bound stays on the resolver's own calls, per call: a worker whose answer (2 MiB of
     * version) is over {@code probe.max-response-bytes} is refused, over the stream a probe opens
     * and over the unary call of a worker without it, while the channel carries 4 MiB Flight batches.
     */
    @Test
    void aWorkerInfoAnswerOverTheBoundIsStillRefusedOnTheChannelThatCarriesLargeFlightBatches() throws Exception {
        RollcallWorker big = closing(RollcallWorker.builder().version("1.0.0")
                .flightProducer(new OneBatch(allocator, MILLION)).start());
        WorkerInfoResponse oversized = WorkerInfoResponse.newBuilder().setVersion("1".repeat(2 << 20))
                .setInstanceId("hostile").build();
        WorkerEndpoint streaming = answering(oversized, true);
        WorkerEndpoint unaryOnly = answering(oversized, false);
        WorkerResolver r = closing(WorkerResolver.builder().discovery(discovery).policy(w -> Verdict.accept())
                .fetchSchemas(false).build());
        discovery.push(List.of(big.endpoint(), streaming, unaryOnly));
        r.awaitWorkers(1, WAIT);
        assertThat(rows(r.channel(big.endpoint()))).isEqualTo(MILLION);
        for (WorkerEndpoint hostile : List.of(streaming, unaryOnly)) {
            await().atMost(WAIT).untilAsserted(() -> {
                WorkerStatus status = r.pin().status(hostile.url()).orElseThrow();
                assertThat(status.state()).as(hostile.url()).isEqualTo(WorkerStatus.State.UNREACHABLE);
                assertThat(status.reason()).startsWith("RESOURCE_EXHAUSTED: answer too large")
                        .contains("rollcall.probe.max-response-bytes").contains("1048576");
            });
        }
        assertThat(r.workers()).extracting(w -> w.endpoint().url()).containsExactly(big.endpoint().url());
    }

    /**
     * Your calls on a shared channel run their callbacks as on an ordinary channel, on threads of
     * their own ({@code rollcall-calls-<name>-N}), never on the probe event loop: a callback that
     * blocks (here one per worker, all at once) holds up neither the resolver's probes nor the pushes
     * of the workers' streams on the same connections, and a drain is still seen at once.
     */
    @Test
    void yourCallbacksOnSharedChannelsNeverHoldUpTheResolversOwnCallsOnThem() throws Exception {
        List<RollcallWorker> fleet = List.of(worker(), worker(), worker(), worker());
        WorkerResolver r = closing(WorkerResolver.builder().name("shared-callbacks").discovery(discovery)
                .policy(w -> Verdict.accept()).fetchSchemas(false).build());
        discovery.push(fleet.stream().map(RollcallWorker::endpoint).toList());
        r.awaitWorkers(fleet.size(), WAIT);
        CountDownLatch entered = new CountDownLatch(fleet.size());
        CountDownLatch release = new CountDownLatch(1);
        Set<String> threads = ConcurrentHashMap.newKeySet();
        open.add(release::countDown);
        for (RollcallWorker w : fleet) {
            ClientCalls.asyncUnaryCall(r.channel(w.endpoint()).newCall(
                    WorkerServiceGrpc.getWorkerInfoMethod(), CallOptions.DEFAULT),
                    WorkerInfoRequest.getDefaultInstance(), new StreamObserver<WorkerInfoResponse>() {
                        @Override
                        public void onNext(WorkerInfoResponse answer) {
                            threads.add(Thread.currentThread().getName());
                            entered.countDown();
                            try {
                                release.await(); // a user's slow callback
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }

                        @Override
                        public void onError(Throwable t) {
                        }

                        @Override
                        public void onCompleted() {
                        }
                    });
        }
        assertThat(entered.await(20, TimeUnit.SECONDS)).isTrue();
        assertThat(threads).allSatisfy(t -> assertThat(t).startsWith("rollcall-calls-shared-callbacks-"));

        RollcallWorker drained = fleet.get(2);
        drained.drain();
        r.await(s -> s.status(drained.endpoint().url()).map(st -> st.state() == WorkerStatus.State.DRAINING)
                .orElse(false), WAIT);
        release.countDown();
        r.close();
        assertThat(Thread.getAllStackTraces().keySet()).as("the callbacks' threads end with the resolver")
                .noneMatch(t -> t.getName().startsWith("rollcall-calls-shared-callbacks-"));
    }

    /** A hand-written worker answering {@code answer}; without the stream, {@code WatchWorkerInfo} is UNIMPLEMENTED. */
    private WorkerEndpoint answering(WorkerInfoResponse answer, boolean stream) throws Exception {
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new WorkerServiceGrpc.WorkerServiceImplBase() {
                    @Override
                    public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
                        out.onNext(answer);
                        out.onCompleted();
                    }

                    @Override
                    public void watchWorkerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
                        if (stream) {
                            out.onNext(answer); // and stays open, as a worker's stream does
                        } else {
                            out.onError(Status.UNIMPLEMENTED.asRuntimeException());
                        }
                    }
                })
                .build().start();
        open.add(() -> server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return WorkerEndpoint.of("127.0.0.1", ((InetSocketAddress) server.getListenSockets().get(0)).getPort());
    }

    @Test
    void aFlightClientOnTheSharedChannelServesADoGetOverTheProbesConnection() throws Exception {
        RollcallWorker a = worker();
        WorkerResolver r = resolver(a.endpoint());
        ManagedChannel channel = r.channel(a.endpoint());
        assertThat(rows(channel)).isEqualTo(5);
        assertThat(rows(channel)).as("closing a Flight client leaves the channel open").isEqualTo(5);
        assertThat(r.channel(a.endpoint()).authority()).isEqualTo(channel.authority());
        assertThatThrownBy(channel::shutdown).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("belongs to resolver");
        assertThatThrownBy(() -> r.channel(WorkerEndpoint.of("127.0.0.1", 9)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("grpc://127.0.0.1:9");
    }

    @Test
    void theResolverClosesTheChannelWhenTheWorkerLeavesAndEveryOneWhenItCloses() throws Exception {
        RollcallWorker a = worker();
        RollcallWorker b = worker();
        WorkerResolver r = resolver(a.endpoint(), b.endpoint());
        ManagedChannel toA = r.channel(a.endpoint());
        ManagedChannel toB = r.channel(b.endpoint());
        assertThat(rows(toA) + rows(toB)).isEqualTo(10);

        discovery.push(List.of(b.endpoint()));
        r.await(s -> s.status(a.endpoint().url()).isEmpty(), WAIT);
        assertThat(toA.awaitTermination(10, TimeUnit.SECONDS)).as("closed when its worker left").isTrue();
        assertThat(toB.isShutdown()).isFalse();

        r.close();
        assertThat(toB.awaitTermination(10, TimeUnit.SECONDS)).as("closed with the resolver").isTrue();
    }

    private static final int MILLION = 1_000_000;

    /** One batch of {@code rows} ints, 0 upwards, per DoGet. */
    private static final class OneBatch extends NoOpFlightProducer {
        private final BufferAllocator allocator;
        private final int rows;

        OneBatch(BufferAllocator allocator, int rows) {
            this.allocator = allocator;
            this.rows = rows;
        }

        @Override
        public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
            try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
                IntVector n = (IntVector) root.getVector("n");
                n.allocateNew(rows);
                for (int i = 0; i < rows; i++) {
                    n.set(i, i);
                }
                root.setRowCount(rows);
                listener.start(root);
                listener.putNext();
                listener.completed();
            }
        }
    }

    /** Five rows per DoGet. */
    private static final class FiveRows extends NoOpFlightProducer {
        private final BufferAllocator allocator;

        FiveRows(BufferAllocator allocator) {
            this.allocator = allocator;
        }

        @Override
        public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
            try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
                IntVector n = (IntVector) root.getVector("n");
                n.allocateNew(5);
                for (int i = 0; i < 5; i++) {
                    n.set(i, i);
                }
                root.setRowCount(5);
                listener.start(root);
                listener.putNext();
                listener.completed();
            }
        }
    }
}
