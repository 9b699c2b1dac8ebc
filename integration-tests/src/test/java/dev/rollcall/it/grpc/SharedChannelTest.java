package dev.rollcall.it.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.core.worker.RollcallWorker;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.List;
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
