package dev.rollcall.core;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ReleaseWorkerResponse;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Attributes;
import io.grpc.Server;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A worker written with the generated stubs, on loopback, for what a real one does not do on
 * demand: it records the holder ids of the watches and every {@code ReleaseWorker} it is sent, and
 * answers releases with the statuses it is scripted with (then OK), or {@code UNIMPLEMENTED}
 * throughout when it plays a worker from before exact drain. {@link #answer} pushes a new answer to
 * every open watch; {@link #answering(WorkerInfoResponse)} plays a worker that lies (its answer
 * sent as it is), and it counts the probes and watches it is sent.
 */
final class ScriptedWorker implements AutoCloseable {

    private final Server server;
    private final WorkerEndpoint endpoint;      // kept: the server says no port once shut down
    private final List<String> holderIds = new CopyOnWriteArrayList<>();
    private final List<ReleaseWorkerRequest> releases = new CopyOnWriteArrayList<>();
    private final List<StreamObserver<WorkerInfoResponse>> watches = new CopyOnWriteArrayList<>();
    private final Queue<Status> script = new ArrayDeque<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger infoCalls = new AtomicInteger();
    private final AtomicInteger watchCalls = new AtomicInteger();
    private final boolean releaseImplemented;
    private volatile WorkerInfoResponse answer;
    private long revision;

    private ScriptedWorker(boolean releaseImplemented, String instanceId) throws IOException {
        this.releaseImplemented = releaseImplemented;
        this.answer = WorkerInfoResponse.newBuilder().setVersion("1.0.0").setInstanceId(instanceId)
                .setRevision(++revision).build();
        server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(new Service()).addTransportFilter(new ServerTransportFilter() {
                    @Override
                    public Attributes transportReady(Attributes attributes) {
                        connections.incrementAndGet();
                        return attributes;
                    }

                    @Override
                    public void transportTerminated(Attributes attributes) {
                        connections.decrementAndGet();
                    }
                }).build().start();
        endpoint = WorkerEndpoint.of("127.0.0.1", server.getPort());
    }

    /** A worker that implements ReleaseWorker, answering with {@code statuses} first, then OK. */
    static ScriptedWorker releasing(Status.Code... statuses) throws IOException {
        ScriptedWorker w = new ScriptedWorker(true, "instance-1");
        for (Status.Code code : statuses) {
            w.script.add(code.toStatus());
        }
        return w;
    }

    /** A worker that answers {@code version}, and implements ReleaseWorker. */
    static ScriptedWorker answering(String version) throws IOException {
        ScriptedWorker w = new ScriptedWorker(true, "instance-" + version);
        w.answerVersion(version);
        return w;
    }

    /**
     * A worker that answers {@code answer} as it is (bounds broken or not), stamped with a revision,
     * and implements ReleaseWorker: a worker that lies.
     */
    static ScriptedWorker answering(WorkerInfoResponse answer) throws IOException {
        ScriptedWorker w = new ScriptedWorker(true, answer.getInstanceId());
        w.push(answer.toBuilder());
        return w;
    }

    /** A worker that implements ReleaseWorker, answering with {@code statuses} (descriptions and all) first, then OK. */
    static ScriptedWorker releasingWith(Status... statuses) throws IOException {
        ScriptedWorker w = new ScriptedWorker(true, "instance-1");
        w.script.addAll(Arrays.asList(statuses));
        return w;
    }

    /** A worker from before exact drain: ReleaseWorker is UNIMPLEMENTED. */
    static ScriptedWorker beforeExactDrain() throws IOException {
        return new ScriptedWorker(false, "instance-old");
    }

    WorkerEndpoint endpoint() {
        return endpoint;
    }

    /** Pushes {@code state} (and {@code instanceId}) to every watch, as a new revision. */
    synchronized void answer(ServingState state, String instanceId) {
        answer = answer.toBuilder().setState(state).setInstanceId(instanceId).setRevision(++revision).build();
        for (StreamObserver<WorkerInfoResponse> w : watches) {
            synchronized (w) {
                w.onNext(answer);
            }
        }
    }

    /** Pushes {@code version} to every watch, as a new revision. */
    synchronized void answerVersion(String version) {
        push(answer.toBuilder().setVersion(version));
    }

    /** Pushes {@code capabilities} (as they are, however malformed) to every watch, as a new revision. */
    synchronized void answerCapabilities(List<dev.rollcall.protocol.v1.Capability> capabilities) {
        push(answer.toBuilder().clearCapabilities().addAllCapabilities(capabilities));
    }

    private synchronized void push(WorkerInfoResponse.Builder next) {
        answer = next.setRevision(++revision).build();
        for (StreamObserver<WorkerInfoResponse> w : watches) {
            synchronized (w) {
                w.onNext(answer);
            }
        }
    }

    /** The answer it gives now. */
    WorkerInfoResponse currentAnswer() {
        return answer;
    }

    /** WorkerInfo (unary) calls answered so far: each is a probe. */
    int infoCalls() {
        return infoCalls.get();
    }

    /** WatchWorkerInfo streams opened to it so far, ended ones included. */
    int watchCalls() {
        return watchCalls.get();
    }

    String instanceId() {
        return answer.getInstanceId();
    }

    /** The holder_id of each WatchWorkerInfo request so far ("" for none). */
    List<String> holderIds() {
        return List.copyOf(holderIds);
    }

    /** WatchWorkerInfo streams open to it now (a cancelled one is gone). */
    int openWatches() {
        return watches.size();
    }

    /** Connections open to it now, as its server counts them. */
    int openConnections() {
        return connections.get();
    }

    /** Every ReleaseWorker request so far, in order. */
    List<ReleaseWorkerRequest> releases() {
        return List.copyOf(releases);
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private final class Service extends WorkerServiceGrpc.WorkerServiceImplBase {
        @Override
        public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
            infoCalls.incrementAndGet();
            observer.onNext(answer);
            observer.onCompleted();
        }

        @Override
        public void watchWorkerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
            holderIds.add(request.getHolderId());
            watchCalls.incrementAndGet();
            if (observer instanceof ServerCallStreamObserver<WorkerInfoResponse> call) {
                call.setOnCancelHandler(() -> watches.remove(observer));
            }
            synchronized (ScriptedWorker.this) {
                watches.add(observer);
                synchronized (observer) {
                    observer.onNext(answer);
                }
            }
        }

        @Override
        public void releaseWorker(ReleaseWorkerRequest request, StreamObserver<ReleaseWorkerResponse> observer) {
            releases.add(request);
            if (!releaseImplemented) {
                super.releaseWorker(request, observer); // UNIMPLEMENTED, as the generated base answers
                return;
            }
            Status status;
            synchronized (script) {
                status = script.poll();
            }
            if (status != null && !status.isOk()) {
                observer.onError(status.asRuntimeException());
                return;
            }
            observer.onNext(ReleaseWorkerResponse.getDefaultInstance());
            observer.onCompleted();
        }
    }
}
