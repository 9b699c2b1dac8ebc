package dev.rollcall.worker;

import dev.rollcall.api.PeerText;
import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ReleaseWorkerResponse;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * The three calls of {@code rollcall.v1.WorkerService} as a {@link WorkerInfoService} answers them:
 * {@code WorkerInfo} (the current answer), {@code WatchWorkerInfo} (a stream of answers, a holder's
 * when it names a {@code holder_id}) and {@code ReleaseWorker} (a holder lets go). Checks what a
 * caller sent and refuses it with a status that says why, the caller's text escaped and bounded;
 * the service keeps the state. Called on gRPC's threads; thread-safe.
 */
final class WorkerServiceCalls extends WorkerServiceGrpc.WorkerServiceImplBase {

    private final WorkerInfoService service;
    private final WatchStreams streams;
    /** Run (without the service's lock) after what the service's holders answer may have changed. */
    private final Runnable holdersChanged;

    WorkerServiceCalls(WorkerInfoService service, WatchStreams streams, Runnable holdersChanged) {
        this.service = service;
        this.streams = streams;
        this.holdersChanged = holdersChanged;
    }

    @Override
    public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
        observer.onNext(service.current().unary());
        observer.onCompleted();
    }

    @Override
    public void watchWorkerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
        String holder = request.getHolderId();
        String bad = holder.isEmpty() ? null : Holders.check("holder_id", holder);
        if (bad != null) {
            observer.onError(Status.INVALID_ARGUMENT.withDescription(bad).asRuntimeException());
            return;
        }
        ServerCallStreamObserver<WorkerInfoResponse> call = (ServerCallStreamObserver<WorkerInfoResponse>) observer;
        int heartbeat = WorkerInfoService.grantedHeartbeat(Integer.toUnsignedLong(request.getHeartbeatMillis()));
        WatchStream w = new WatchStream(call, heartbeat, streams.ticker());
        call.setOnCancelHandler(() -> {
            streams.remove(w);
            if (!holder.isEmpty()) {
                service.holderEnded(w);
            }
        });
        call.setOnReadyHandler(w::flush);
        boolean changed = !holder.isEmpty() && service.holderOpened(w, holder, WatchLimit.PEER.get());
        streams.add(w);
        if (changed) {
            streams.push();
            holdersChanged.run();
        }
    }

    @Override
    public void releaseWorker(ReleaseWorkerRequest request, StreamObserver<ReleaseWorkerResponse> observer) {
        String bad = Holders.check("holder_id", request.getHolderId());
        if (bad != null) {
            observer.onError(Status.INVALID_ARGUMENT.withDescription(bad).asRuntimeException());
            return;
        }
        if (!service.instanceId().equals(request.getInstanceId())) {
            observer.onError(Status.FAILED_PRECONDITION.withDescription("instance_id '"
                    + PeerText.escape(request.getInstanceId(), 128) + "' is not this worker process's ('"
                    + service.instanceId() + "'): released nothing").asRuntimeException());
            return;
        }
        WorkerInfoService.Released released = service.release(request.getHolderId());
        if (released.outcome() == Holders.Release.HOLDS_NOTHING) {
            observer.onError(Status.NOT_FOUND.withDescription("holder_id '" + Holders.tag(request.getHolderId())
                    + "' holds nothing on this worker (no WatchWorkerInfo stream of it is open, and this drain "
                    + "did not release it): released nothing").asRuntimeException());
            return;
        }
        boolean changed = released.outcome() == Holders.Release.CHANGED;
        if (changed) {
            streams.push();
        }
        // Answered before the close that this release may let go of is told: after an exact
        // drain the server's grace is short (WorkerServer.stop), and the answer is then queued
        // on the connection before the stop starts.
        observer.onNext(ReleaseWorkerResponse.newBuilder().setHolders(released.left()).build());
        observer.onCompleted();
        if (changed) {
            holdersChanged.run();
        }
    }
}
