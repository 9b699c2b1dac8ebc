package dev.rollcall.it.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
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
 * A slow Flight reader on the shared channel: the reader stops taking batches for longer than the
 * silence the resolver takes for a cut-off host (keepalive 1 s + 200 ms), so the stream's data waits
 * unread in the connection. The worker's heartbeats come over the same connection (its
 * {@code WatchWorkerInfo} stream, on a hand-written worker that grants them); a paused user stream
 * must not hold them up, so the worker stays in every snapshot. With a worker whose heartbeats stop,
 * the same test sees the worker leave.
 */
class PausedFlightReaderTest {

    private static final Schema SCHEMA = new Schema(List.of(Field.nullable("n", new ArrowType.Int(32, true))));
    private static final int BATCH_ROWS = 1 << 18;
    @AutoClose
    private final Closer open = new Closer();

    @Test
    void aReaderThatPausesLongerThanTheLivenessTimeoutKeepsItsWorker() throws Exception {
        BufferAllocator allocator = open.add(new RootAllocator());
        ScheduledExecutorService beats = Executors.newSingleThreadScheduledExecutor();
        open.add(beats::shutdownNow);
        ExecutorService flight = Executors.newCachedThreadPool();
        open.add(flight::shutdownNow);
        WorkerInfoResponse answer = WorkerInfoResponse.newBuilder().setVersion("1.0.0").setInstanceId("one")
                .setRevision(1).build();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .permitKeepAliveTime(1, TimeUnit.SECONDS).permitKeepAliveWithoutCalls(true)
                .executor(flight)
                .addService(new WorkerServiceGrpc.WorkerServiceImplBase() {
                    @Override
                    public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
                        out.onNext(answer);
                        out.onCompleted();
                    }

                    @Override
                    public void watchWorkerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
                        int granted = Math.max(1_000, request.getHeartbeatMillis());
                        WorkerInfoResponse mine = answer.toBuilder().setHeartbeatMillis(granted).build();
                        ServerCallStreamObserver<WorkerInfoResponse> o = (ServerCallStreamObserver<WorkerInfoResponse>) out;
                        synchronized (o) {
                            o.onNext(mine);
                        }
                        beats.scheduleAtFixedRate(() -> {
                            synchronized (o) {
                                if (!o.isCancelled()) {
                                    o.onNext(mine);
                                }
                            }
                        }, granted, granted, TimeUnit.MILLISECONDS);
                    }
                })
                .addService(FlightGrpcUtils.createFlightService(allocator, new Batches(allocator), null, flight))
                .build().start();
        open.add(() -> server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        WorkerEndpoint endpoint = WorkerEndpoint.of("127.0.0.1", server.getPort());
        PushDiscovery discovery = new PushDiscovery();
        WorkerResolver r = open.add(WorkerResolver.builder().discovery(discovery).policy(w -> Verdict.accept())
                .keepalive(Duration.ofSeconds(1), Duration.ofMillis(200)).fetchSchemas(false).build());
        discovery.push(List.of(endpoint));
        r.awaitWorkers(1, Duration.ofSeconds(20));
        ConcurrentLinkedQueue<FleetSnapshot> seen = new ConcurrentLinkedQueue<>();
        open.add(r.addListener(seen::add));

        try (FlightClient client = FlightGrpcUtils.createFlightClientWithSharedChannel(allocator, r.channel(endpoint));
             FlightStream stream = client.getStream(new Ticket(new byte[] {1}))) {
            assertThat(stream.next()).isTrue();
            Thread.sleep(3_000); // the fault itself, not a synchronisation: a reader that stops reading for 2.5 times the silence the resolver takes for a cut-off host
            long rows = stream.getRoot().getRowCount();
            while (stream.next()) {
                rows += stream.getRoot().getRowCount();
            }
            assertThat(rows).isEqualTo(64L * BATCH_ROWS);
        }
        assertThat(seen).as("snapshots while the reader paused").allSatisfy(s -> assertThat(s.workers()).hasSize(1));
    }

    /** 64 batches of 1 MiB, sent as fast as the client takes them. */
    private static final class Batches extends NoOpFlightProducer {
        private final BufferAllocator allocator;

        Batches(BufferAllocator allocator) {
            this.allocator = allocator;
        }

        @Override
        public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
            VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
            IntVector n = (IntVector) root.getVector("n");
            n.allocateNew(BATCH_ROWS);
            for (int i = 0; i < BATCH_ROWS; i++) {
                n.set(i, i);
            }
            root.setRowCount(BATCH_ROWS);
            int[] left = {64};
            Runnable send = () -> {
                synchronized (left) {
                    while (left[0] > 0 && listener.isReady()) {
                        listener.putNext();
                        left[0]--;
                    }
                    if (left[0] == 0) {
                        left[0] = -1;
                        listener.completed();
                        root.close();
                    }
                }
            };
            listener.start(root);
            listener.setOnReadyHandler(send);
            send.run();
        }
    }
}
