package dev.rollcall.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ReleaseWorkerResponse;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.conformance.RuleResult.Outcome;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A hostile worker that streams answers of nearly 1 MiB (each legal on its own, a new revision each) as
 * fast as the kit takes them, on every stream the kit opens: the kit keeps at most its budget per stream,
 * cuts the stream off and says so, instead of queueing thousands of them.
 */
class AnswerBudgetTest {

    @Test
    void aWorkerThatStreamsLargeAnswersAsFastAsItCan_isCutOffAtTheByteBudget() throws Exception {
        try (FloodingWorker worker = new FloodingWorker()) {
            ConformanceReport report = WorkerConformance.builder().target("127.0.0.1", worker.port())
                    .callTimeout(Duration.ofSeconds(5)).watch(Duration.ofSeconds(1)).build().check();
            String lines = String.join("\n", report.lines());

            assertThat(report.failures()).extracting(RuleResult::rule).as(lines).containsExactly("W6");
            assertThat(report.result("W6").orElseThrow().seen()).as(lines)
                    .contains("the heartbeat stream sent more than 16 MiB of answers (the kit's budget per stream)")
                    .contains("the no-heartbeat stream sent more than 16 MiB")
                    .contains("was cut off");
            assertThat(report.result("W14").orElseThrow().outcome()).as(lines).isEqualTo(Outcome.PASSED);
            // The kit stopped reading each stream at its budget: the worker got out at most that, and what
            // the connection holds in flight, however fast it could send (the count bound alone lets 10,000
            // answers, about 10 GiB, be queued).
            long perStreamBound = WatchedStream.MAX_QUEUED_BYTES + FloodingWorker.IN_FLIGHT;
            assertThat(worker.streamsCutOff()).as(lines).isEqualTo(3);
            assertThat(worker.mostSentOnOneStream()).as(lines).isGreaterThan(WatchedStream.MAX_QUEUED_BYTES)
                    .isLessThanOrEqualTo(perStreamBound);
        }
    }

    /**
     * Streams a new answer of nearly 1 MiB whenever gRPC can take one (it keeps no queue of its own: what it
     * sent is what the connection and the kit hold), and holds {@code ReleaseWorker} until the kit has cut
     * off every stream it opened, then answers {@code UNIMPLEMENTED}: the kit's thread waits on that call
     * meanwhile, as it would on a slow worker, so nothing is read while the streams flood.
     */
    private static final class FloodingWorker extends WorkerServiceGrpc.WorkerServiceImplBase implements AutoCloseable {

        /** At most what one stream's connection holds in flight beyond the kit: HTTP/2 windows, socket buffers. */
        static final long IN_FLIGHT = 16L << 20;

        private final WorkerInfoResponse answer = largeAnswer();
        private final Server server;
        private final AtomicLong revisions = new AtomicLong(1);
        /** The newest answer any stream was sent: WorkerInfo says it, so that it never says a revision below a push (W9). */
        private final AtomicReference<WorkerInfoResponse> newest;
        private final AtomicInteger open = new AtomicInteger();
        private final AtomicInteger cutOff = new AtomicInteger();
        private final List<AtomicLong> sentPerStream = new CopyOnWriteArrayList<>();
        private final List<StreamObserver<ReleaseWorkerResponse>> heldReleases = new CopyOnWriteArrayList<>();

        FloodingWorker() throws IOException {
            newest = new AtomicReference<>(answer);
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(this).build().start();
        }

        /**
         * Legal on every bound of W14, just under the coordinators' 1 MiB on the wire: a field v1 does not
         * know fills it (coordinators ignore it), so that the kit decodes answers about as fast as they come.
         */
        private static WorkerInfoResponse largeAnswer() {
            ByteString filler = ByteString.copyFrom(new byte[(1 << 20) - 1024]);
            return WorkerInfoResponse.newBuilder().setVersion("1.0.0").setInstanceId(UUID.randomUUID().toString())
                    .setRevision(1).putLabels("zone", "a")
                    .setUnknownFields(UnknownFieldSet.newBuilder()
                            .addField(1000, UnknownFieldSet.Field.newBuilder().addLengthDelimited(filler).build()).build())
                    .build();
        }

        int port() {
            return server.getPort();
        }

        int streamsCutOff() {
            return cutOff.get();
        }

        long mostSentOnOneStream() {
            return sentPerStream.stream().mapToLong(AtomicLong::get).max().orElse(0);
        }

        @Override
        public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
            out.onNext(newest.get());
            out.onCompleted();
        }

        @Override
        public void watchWorkerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
            ServerCallStreamObserver<WorkerInfoResponse> out = (ServerCallStreamObserver<WorkerInfoResponse>) observer;
            int granted = request.getHeartbeatMillis() == 0 ? 0 : Math.max(1000, request.getHeartbeatMillis());
            AtomicLong sent = new AtomicLong();
            sentPerStream.add(sent);
            open.incrementAndGet();
            out.setOnCancelHandler(() -> {
                synchronized (FloodingWorker.this) {
                    cutOff.incrementAndGet();
                    if (open.decrementAndGet() == 0) {
                        heldReleases.forEach(r -> r.onError(Status.UNIMPLEMENTED.asException()));
                        heldReleases.clear();
                    }
                }
            });
            // gRPC runs a call's handlers one at a time: this first answer and the ready handler's never overlap.
            // The first answer of every stream is the first answer of WorkerInfo, however far the others went
            // (W5 compares them), and each stream's revisions then grow.
            out.onNext(answer.toBuilder().setHeartbeatMillis(granted).build());
            sent.addAndGet(answer.getSerializedSize());
            out.setOnReadyHandler(() -> {
                while (out.isReady() && !out.isCancelled()) {
                    WorkerInfoResponse next = answer.toBuilder().setRevision(revisions.incrementAndGet()).build();
                    newest.accumulateAndGet(next, (a, b) -> a.getRevision() > b.getRevision() ? a : b);
                    out.onNext(next.toBuilder().setHeartbeatMillis(granted).build());
                    sent.addAndGet(next.getSerializedSize());
                }
            });
        }

        @Override
        public synchronized void releaseWorker(ReleaseWorkerRequest request, StreamObserver<ReleaseWorkerResponse> out) {
            if (open.get() == 0) { // every stream cut off before this call came
                out.onError(Status.UNIMPLEMENTED.asException());
            } else {
                heldReleases.add(out);
            }
        }

        @Override
        public void close() {
            server.shutdownNow();
            try {
                server.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
