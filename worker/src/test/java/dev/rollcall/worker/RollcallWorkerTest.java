package dev.rollcall.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

class RollcallWorkerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    /** Streams one batch holding the ticket's number, squared. */
    private static final class SquareProducer extends NoOpFlightProducer {
        private final BufferAllocator allocator;

        SquareProducer(BufferAllocator allocator) {
            this.allocator = allocator;
        }

        @Override
        public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
            long n = Long.parseLong(new String(ticket.getBytes(), StandardCharsets.UTF_8));
            Schema schema = new Schema(List.of(Field.nullable("square", new ArrowType.Int(64, true))));
            try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
                BigIntVector v = (BigIntVector) root.getVector("square");
                v.allocateNew(1);
                v.set(0, n * n);
                root.setRowCount(1);
                listener.start(root);
                listener.putNext();
                listener.completed();
            }
        }
    }

    @Test
    void servesWorkerInfoAndArrowFlightOnOnePort() throws Exception {
        try (BufferAllocator allocator = new RootAllocator();
             RollcallWorker worker = RollcallWorker.builder()
                     .version("1.4.0")
                     .label("zone", "a")
                     .advertise(new ServiceInfo("sum", Visibility.INTERNAL,
                             List.of(new HandlerInfo("run", Optional.of(Visibility.PUBLIC)), HandlerInfo.of("plan"))))
                     .flightProducer(new SquareProducer(allocator))
                     .start()) {
            WorkerInfo info = TestProbe.info(worker.endpoint(), TIMEOUT).get(10, TimeUnit.SECONDS);
            assertThat(info.version()).isEqualTo("1.4.0");
            assertThat(info.instanceId()).isEqualTo(worker.instanceId()).isNotBlank();
            assertThat(info.labels()).containsEntry("zone", "a");
            assertThat(info.services()).containsExactly(new ServiceInfo("sum", Visibility.INTERNAL,
                    List.of(new HandlerInfo("run", Optional.of(Visibility.PUBLIC)), HandlerInfo.of("plan"))));

            try (FlightClient client = FlightClient.builder(allocator,
                    Location.forGrpcInsecure("127.0.0.1", worker.port())).build();
                 FlightStream stream = client.getStream(new Ticket("12".getBytes(StandardCharsets.UTF_8)))) {
                assertThat(stream.next()).isTrue();
                assertThat(((BigIntVector) stream.getRoot().getVector("square")).get(0)).isEqualTo(144L);
                assertThat(stream.next()).isFalse();
            }
        }
    }

    @Test
    void onceTheLastWorkerIsClosedItsPushThreadEndsWithoutWaitingOutItsIdleTime() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().start()) {
            worker.drain(); // a push: the shared push thread runs
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> pushThreads() > 0);
        }
        assertThat(PushThread.holders()).as("workers still open in this JVM (a test that leaks one?)").isZero();
        // Its idle time is 10 s while a worker is open; a test's thread census allows less.
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(3)).alias("queue " + PushThread.shared().getQueue()).until(() -> pushThreads() == 0);
    }

    private static long pushThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("rollcall-worker-push")).count();
    }

    @Test
    void versionDefaultsToEmpty() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().start()) {
            assertThat(TestProbe.info(worker.endpoint(), TIMEOUT).get(10, TimeUnit.SECONDS).version()).isEmpty();
        }
    }

    @Test
    void eachStartHasItsOwnInstanceId() throws Exception {
        try (RollcallWorker a = RollcallWorker.builder().start(); RollcallWorker b = RollcallWorker.builder().start()) {
            assertThat(a.instanceId()).isNotEqualTo(b.instanceId());
        }
    }

    @Test
    void workerInfoServiceJoinsAUsersOwnServer() throws Exception {
        WorkerInfoService service = WorkerInfoService.builder().version("2.1.0").label("engine", "x").build();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(service).build().start();
        try {
            WorkerEndpoint endpoint = WorkerEndpoint.of("127.0.0.1", server.getPort());
            WorkerInfo info = TestProbe.info(endpoint, TIMEOUT).get(10, TimeUnit.SECONDS);
            assertThat(info.version()).isEqualTo("2.1.0");
            assertThat(info.instanceId()).isEqualTo(service.instanceId());
            assertThat(info.labels()).isEqualTo(Map.of("engine", "x"));
        } finally {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void startFailsClearlyWhenThePortIsTaken() throws Exception {
        try (RollcallWorker first = RollcallWorker.builder().start()) {
            assertThatThrownBy(() -> RollcallWorker.builder().port(first.port()).start())
                    .isInstanceOf(java.io.IOException.class)
                    .hasMessageContaining("127.0.0.1:" + first.port());
        }
    }
}
