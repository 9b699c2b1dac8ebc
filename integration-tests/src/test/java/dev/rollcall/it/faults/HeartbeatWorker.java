package dev.rollcall.it.faults;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A worker that speaks the protocol as the heartbeat design says a worker does, for tests of the
 * coordinator's half before (and besides) {@code RollcallWorker}'s: its {@code WatchWorkerInfo}
 * grants the {@code heartbeat_millis} asked for, clamped to [1 s, 60 s], and repeats its answer (same
 * revision) that often; its server permits HTTP/2 pings every 5 s, calls or not. As a worker from
 * before heartbeats it grants none; as one that serves only the unary call it answers the stream
 * {@code UNIMPLEMENTED}. A real gRPC server on loopback.
 */
final class HeartbeatWorker implements AutoCloseable {

    /** What the worker's stream does. */
    enum Kind {
        /** Grants heartbeats and repeats its answer. */
        GRANTS_HEARTBEATS,
        /** Serves the stream but repeats nothing (heartbeat_millis 0). */
        NO_HEARTBEATS,
        /** Serves only the unary call. */
        UNARY_ONLY
    }

    private static final AtomicInteger COUNT = new AtomicInteger();

    private final ScheduledExecutorService timers;
    private final Server server;
    private final WorkerInfoResponse answer;
    /** The heartbeat_millis the last stream asked for. */
    private final AtomicInteger asked = new AtomicInteger(-1);

    private HeartbeatWorker(String version, Kind kind) {
        int n = COUNT.incrementAndGet();
        this.timers = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "test-heartbeat-worker-" + n);
            t.setDaemon(true);
            return t;
        });
        this.answer = WorkerInfoResponse.newBuilder().setVersion(version).setInstanceId("heartbeat-" + n)
                .setRevision(1).build();
        WorkerServiceGrpc.WorkerServiceImplBase service = kind == Kind.UNARY_ONLY
                ? new WorkerServiceGrpc.WorkerServiceImplBase() {
                    @Override
                    public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
                        out.onNext(answer);
                        out.onCompleted();
                    }
                }
                : new WorkerServiceGrpc.WorkerServiceImplBase() {
                    @Override
                    public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
                        out.onNext(answer);
                        out.onCompleted();
                    }

                    @Override
                    public void watchWorkerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
                        asked.set(request.getHeartbeatMillis());
                        watch(request, (ServerCallStreamObserver<WorkerInfoResponse>) out, kind);
                    }
                };
        try {
            this.server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                    .permitKeepAliveTime(5, TimeUnit.SECONDS)
                    .permitKeepAliveWithoutCalls(true)
                    .addService(service)
                    .build()
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve on loopback", e);
        }
    }

    static HeartbeatWorker start(String version, Kind kind) {
        return new HeartbeatWorker(version, kind);
    }

    private void watch(WorkerInfoRequest request, ServerCallStreamObserver<WorkerInfoResponse> out, Kind kind) {
        int granted = kind == Kind.NO_HEARTBEATS || request.getHeartbeatMillis() == 0 ? 0
                : Math.max(1_000, Math.min(60_000, request.getHeartbeatMillis()));
        WorkerInfoResponse mine = answer.toBuilder().setHeartbeatMillis(granted).build();
        java.util.concurrent.atomic.AtomicReference<ScheduledFuture<?>> repeat = new java.util.concurrent.atomic.AtomicReference<>();
        out.setOnCancelHandler(() -> {
            ScheduledFuture<?> r = repeat.get();
            if (r != null) {
                r.cancel(false);
            }
        });
        synchronized (out) {
            out.onNext(mine);
        }
        if (granted == 0) {
            return;
        }
        // Nothing else is ever sent on this stream, so "nothing sent for that long" is a fixed rate.
        repeat.set(timers.scheduleAtFixedRate(() -> {
            synchronized (out) {
                try {
                    if (!out.isCancelled()) {
                        out.onNext(mine);
                    }
                } catch (RuntimeException cancelled) {
                    // the coordinator went away
                }
            }
        }, granted, granted, TimeUnit.MILLISECONDS));
    }

    WorkerEndpoint endpoint() {
        return WorkerEndpoint.of("127.0.0.1", server.getPort());
    }

    /** The heartbeat_millis the last stream asked for; -1 before any. */
    int askedHeartbeatMillis() {
        return asked.get();
    }

    @Override
    public void close() {
        server.shutdownNow();
        timers.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
