package dev.rollcall.cli;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ReleaseWorkerResponse;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A worker that a coordinator discovers but that is not one (anyone who can write a registry entry),
 * on loopback: it records the {@code holder_id} it is sent on {@code WatchWorkerInfo}, drains on
 * demand, and refuses every {@code ReleaseWorker} with {@code NOT_FOUND} echoing the id whole, as a
 * hostile worker might, so that the coordinator's log line of a refusal is tried with the id in it.
 */
final class HolderRecordingWorker implements AutoCloseable {

    private final Server server;
    private final List<String> holderIds = new CopyOnWriteArrayList<>();
    private final List<String> releasedWith = new CopyOnWriteArrayList<>();
    private final List<StreamObserver<WorkerInfoResponse>> watches = new CopyOnWriteArrayList<>();
    private volatile WorkerInfoResponse answer = WorkerInfoResponse.newBuilder().setVersion("1.4.0")
            .setInstanceId("recording-1").setRevision(1).build();

    private HolderRecordingWorker() throws IOException {
        server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(new Service()).build().start();
    }

    static HolderRecordingWorker start() throws IOException {
        return new HolderRecordingWorker();
    }

    WorkerEndpoint endpoint() {
        return WorkerEndpoint.of("127.0.0.1", server.getPort());
    }

    /** The holder_id of each WatchWorkerInfo request so far. */
    List<String> holderIds() {
        return List.copyOf(holderIds);
    }

    /** The holder_id of each ReleaseWorker request so far. */
    List<String> releasedWith() {
        return List.copyOf(releasedWith);
    }

    /** Pushes DRAINING to every watch, as a new revision. */
    synchronized void drain() {
        answer = answer.toBuilder().setState(ServingState.DRAINING).setRevision(answer.getRevision() + 1).build();
        for (StreamObserver<WorkerInfoResponse> w : watches) {
            synchronized (w) {
                w.onNext(answer);
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private final class Service extends WorkerServiceGrpc.WorkerServiceImplBase {
        @Override
        public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
            observer.onNext(answer);
            observer.onCompleted();
        }

        @Override
        public void watchWorkerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
            holderIds.add(request.getHolderId());
            synchronized (HolderRecordingWorker.this) {
                watches.add(observer);
                synchronized (observer) {
                    observer.onNext(answer);
                }
            }
        }

        @Override
        public void releaseWorker(ReleaseWorkerRequest request, StreamObserver<ReleaseWorkerResponse> observer) {
            releasedWith.add(request.getHolderId());
            observer.onError(Status.NOT_FOUND.withDescription("holder_id '" + request.getHolderId()
                    + "' holds nothing here").asRuntimeException());
        }
    }
}
