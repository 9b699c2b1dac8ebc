package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetEvent;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Drain without a failed job: a worker's lifecycle pushed over {@code WatchWorkerInfo} to a resolver
 * that never polls (no refresh in the test's time), against real workers on loopback.
 */
class WorkerDrainTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private final List<AutoCloseable> open = new ArrayList<>();
    private final PushDiscovery discovery = new PushDiscovery();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closing(T c) {
        open.add(c);
        return c;
    }

    private WorkerResolver resolver(WorkerEndpoint... endpoints) {
        WorkerResolver r = closing(WorkerResolver.builder().discovery(discovery)
                .policy(w -> w.version().startsWith("1.") ? dev.rollcall.api.policy.Verdict.accept()
                        : dev.rollcall.api.policy.Verdict.reject("not 1.x"))
                .refreshInterval(Duration.ofHours(1)).fetchSchemas(false).build());
        discovery.push(List.of(endpoints));
        return r;
    }

    private static State state(FleetSnapshot s, RollcallWorker w) {
        return s.status(w.endpoint().url()).orElseThrow().state();
    }

    @Test
    void drainAndResumeAreSeenWithoutPolling() throws Exception {
        RollcallWorker a = closing(RollcallWorker.builder().version("1.0.0").start());
        RollcallWorker b = closing(RollcallWorker.builder().version("1.0.0").start());
        WorkerResolver r = resolver(a.endpoint(), b.endpoint());
        r.awaitWorkers(2, WAIT);
        long probes = r.probesSent();

        a.drain();
        FleetSnapshot drained = r.await(s -> state(s, a) == State.DRAINING, WAIT);
        assertThat(drained.compatibleEndpoints()).containsExactly(b.endpoint());
        assertThat(drained.status(a.endpoint().url()).orElseThrow().reason()).startsWith("draining");

        a.resume();
        r.await(s -> state(s, a) == State.COMPATIBLE, WAIT);
        assertThat(r.probesSent()).as("no probe: both changes were pushed").isEqualTo(probes);
    }

    @Test
    void aSnapshotPinnedBeforeTheDrainKeepsTheWorker() throws Exception {
        RollcallWorker a = closing(RollcallWorker.builder().version("1.0.0").start());
        WorkerResolver r = resolver(a.endpoint());
        FleetSnapshot pinned = r.awaitWorkers(1, WAIT);
        a.drain();
        FleetSnapshot after = r.await(s -> state(s, a) == State.DRAINING, WAIT);
        assertThat(after.workers()).isEmpty();
        assertThat(pinned.compatibleEndpoints()).as("the running query keeps its plan").containsExactly(a.endpoint());
    }

    @Test
    void aWorkerThatStartsNotServingGetsNoWorkUntilItIsReady() throws Exception {
        RollcallWorker a = closing(RollcallWorker.builder().version("1.0.0").startNotServing().start());
        WorkerResolver r = resolver(a.endpoint());
        FleetSnapshot warming = r.await(s -> s.counts().notServing() == 1, WAIT);
        assertThat(warming.workers()).isEmpty();
        a.serving();
        r.awaitWorkers(1, WAIT);
    }

    @Test
    void aWorkerThatOnlyAnswersTheUnaryCallIsStillProbedAndFiltered() throws Exception {
        Server v1 = unaryOnly("1.2.0");
        Server v2 = unaryOnly("2.0.0");
        open.add(() -> {
            v1.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            v2.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        });
        WorkerEndpoint e1 = WorkerEndpoint.of("127.0.0.1", ((InetSocketAddress) v1.getListenSockets().get(0)).getPort());
        WorkerEndpoint e2 = WorkerEndpoint.of("127.0.0.1", ((InetSocketAddress) v2.getListenSockets().get(0)).getPort());
        WorkerResolver r = resolver(e1, e2);
        FleetSnapshot s = r.await(snap -> snap.counts().pending() == 0 && snap.counts().candidates() == 2, WAIT);
        assertThat(s.compatibleEndpoints()).containsExactly(e1);
        assertThat(s.status(e2.url()).orElseThrow().state()).isEqualTo(State.REJECTED);
    }

    /** A plain grpc-java server that implements only the unary WorkerInfo, as older workers do. */
    private static Server unaryOnly(String version) throws Exception {
        return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new WorkerServiceGrpc.WorkerServiceImplBase() {
                    @Override
                    public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
                        observer.onNext(WorkerInfoResponse.newBuilder().setVersion(version).setInstanceId("old").build());
                        observer.onCompleted();
                    }
                }).build().start();
    }

    @Test
    void closeLetsAnInFlightFlightStreamFinishAfterCoordinatorsWereTold() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        BufferAllocator allocator = closing(new RootAllocator());
        RollcallWorker a = RollcallWorker.builder().version("1.0.0").shutdownGrace(Duration.ofSeconds(30))
                .flightProducer(new HeldProducer(allocator, started, release)).start();
        open.add(a);
        WorkerResolver r = resolver(a.endpoint());
        r.awaitWorkers(1, WAIT);

        FlightClient client = closing(FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", a.port())).build());
        CompletableFuture<Integer> rows = CompletableFuture.supplyAsync(() -> {
            int n = 0;
            try (FlightStream stream = client.getStream(new Ticket(new byte[] {1}))) {
                while (stream.next()) {
                    n += stream.getRoot().getRowCount();
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            return n;
        });
        assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<Void> closed = CompletableFuture.runAsync(a::close);
        r.await(s -> state(s, a) == State.DRAINING, WAIT); // told while the stream still runs
        assertThat(closed).isNotDone();
        assertThat(a.callsInFlight()).isEqualTo(1);

        release.countDown();
        assertThat(rows.get(20, TimeUnit.SECONDS)).as("the stream in flight finished").isEqualTo(3);
        closed.get(20, TimeUnit.SECONDS);
        assertThatThrownBy(() -> {
            try (FlightStream s = client.getStream(new Ticket(new byte[] {1}))) {
                s.next();
            }
        }).as("new calls are refused once it stopped").isInstanceOf(FlightRuntimeException.class);
    }

    @Test
    void aCallPlannedBeforeTheDrainStillReachesAWorkerThatHadNoCallYet() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        release.countDown();
        BufferAllocator allocator = closing(new RootAllocator());
        // No call has reached it yet: close() must still give the calls a coordinator planned before
        // it heard of the drain their drain-quiet to arrive, counted from the drain.
        RollcallWorker a = RollcallWorker.builder().version("1.0.0").shutdownGrace(Duration.ofSeconds(30))
                .drainQuiet(Duration.ofSeconds(5))
                .flightProducer(new HeldProducer(allocator, new CountDownLatch(1), release)).start();
        open.add(a);
        WorkerResolver r = resolver(a.endpoint());
        r.awaitWorkers(1, WAIT);
        org.awaitility.Awaitility.await().atMost(WAIT).until(() -> a.coordinatorsWatching() == 1);
        FleetSnapshot planned = r.pin();

        CompletableFuture<Void> closed = CompletableFuture.runAsync(a::close);
        r.await(s -> state(s, a) == State.DRAINING, WAIT);
        WorkerEndpoint target = planned.compatibleEndpoints().get(0);
        FlightClient client = closing(FlightClient.builder(allocator,
                Location.forGrpcInsecure(target.host(), target.port())).build());
        int rows = 0;
        try (FlightStream stream = client.getStream(new Ticket(new byte[] {1}))) {
            while (stream.next()) {
                rows += stream.getRoot().getRowCount();
            }
        }
        assertThat(rows).as("the late call of the pinned plan was served").isEqualTo(3);
        closed.get(30, TimeUnit.SECONDS);
    }

    @Test
    void aStormOfChangesStaysBoundedAndTheLastStateWins() throws Exception {
        RollcallWorker a = closing(RollcallWorker.builder().version("1.0.0").start());
        RollcallWorker b = closing(RollcallWorker.builder().version("1.0.0").start());
        WorkerResolver r = resolver(a.endpoint(), b.endpoint());
        long before = r.awaitWorkers(2, WAIT).number();
        AtomicInteger snapshots = new AtomicInteger();
        closing(r.addListener(s -> {
            if (s.number() > before) {
                snapshots.incrementAndGet();
            }
        })::close);
        for (int i = 0; i < 1000; i++) {
            if (i % 2 == 0) {
                a.drain();
            } else {
                a.resume();
            }
        }
        a.drain();
        // Out of use either way: drained as it last said, or damped for flapping if the resolver saw
        // enough of the storm (held out whatever it says, its last state shown when the hold ends).
        FleetSnapshot last = r.await(s -> state(s, a) == State.DRAINING
                || FleetEvent.WorkerDamped.shows(s.status(a.endpoint().url()).orElseThrow()), WAIT);
        assertThat(last.workers()).extracting(w -> w.endpoint()).containsExactly(b.endpoint());
        long published = r.pin().number() - before;
        assertThat(published).as("snapshots for 1,001 changes").isLessThan(200);
    }

    /** Sends three rows once the test releases it. */
    private static final class HeldProducer extends NoOpFlightProducer {
        private static final Schema SCHEMA = new Schema(List.of(Field.nullable("n", new ArrowType.Int(32, true))));
        private final BufferAllocator allocator;
        private final CountDownLatch started;
        private final CountDownLatch release;

        HeldProducer(BufferAllocator allocator, CountDownLatch started, CountDownLatch release) {
            this.allocator = allocator;
            this.started = started;
            this.release = release;
        }

        @Override
        public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
            started.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
                IntVector n = (IntVector) root.getVector("n");
                n.allocateNew(3);
                for (int i = 0; i < 3; i++) {
                    n.set(i, i);
                }
                root.setRowCount(3);
                listener.start(root);
                listener.putNext();
                listener.completed();
            }
        }
    }
}
