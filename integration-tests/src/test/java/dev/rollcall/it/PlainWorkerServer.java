package dev.rollcall.it;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ReleaseWorkerResponse;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A worker written by hand from the {@code .proto}, on a loopback port: it answers
 * {@code WorkerInfo} and {@code WatchWorkerInfo} with one answer, pushes a new state to every open
 * stream, and counts {@code ReleaseWorker} calls, which it refuses with a given status or, given
 * none, leaves {@code UNIMPLEMENTED} as a server generated before the method. For the tests that need
 * a worker that is not Rollcall's own: an old one, or one that lies.
 */
public final class PlainWorkerServer extends WorkerServiceGrpc.WorkerServiceImplBase implements AutoCloseable {

    /** {@code ReleaseWorker} calls received. */
    public final AtomicInteger releases = new AtomicInteger();
    private final List<StreamObserver<WorkerInfoResponse>> watches = new CopyOnWriteArrayList<>();
    private final Status releaseRefusal;
    private final Server server;
    private volatile WorkerInfoResponse answer;

    /**
     * Serving {@code answer}; {@code releaseRefusal} answers every release ({@code null}:
     * {@code UNIMPLEMENTED}). A state change bumps the revision only when {@code answer} has one.
     */
    public PlainWorkerServer(WorkerInfoResponse answer, Status releaseRefusal) throws IOException {
        this.answer = answer;
        this.releaseRefusal = releaseRefusal;
        this.server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(this).build().start();
    }

    public WorkerEndpoint endpoint() {
        return WorkerEndpoint.of("127.0.0.1", server.getPort());
    }

    @Override
    public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
        out.onNext(answer);
        out.onCompleted();
    }

    @Override
    public void watchWorkerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
        synchronized (this) {
            watches.add(out);
            out.onNext(answer);
        }
    }

    @Override
    public void releaseWorker(ReleaseWorkerRequest request, StreamObserver<ReleaseWorkerResponse> out) {
        releases.incrementAndGet();
        if (releaseRefusal == null) {
            super.releaseWorker(request, out); // UNIMPLEMENTED
        } else {
            out.onError(releaseRefusal.asRuntimeException());
        }
    }

    /** Answers {@code state} from now on and pushes it to every open stream. */
    public synchronized void state(ServingState state) {
        long revision = answer.getRevision() == 0 ? 0 : answer.getRevision() + 1;
        answer = answer.toBuilder().setState(state).setRevision(revision).build();
        for (StreamObserver<WorkerInfoResponse> w : watches) {
            try {
                w.onNext(answer);
            } catch (StatusRuntimeException cancelled) {
                watches.remove(w); // the coordinator closed that stream (a probe's, before it kept one)
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
