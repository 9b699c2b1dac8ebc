package dev.rollcall.conformance;

import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ReleaseWorkerResponse;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.ConnectivityState;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A run's connections to the worker: every channel it opens (each a new connection), closed with
 * the run; gRPC's callbacks on daemon threads named {@code rollcall-conform-RUN-N}; every call with
 * the run's deadline. Used by the run's thread only (the channels themselves are thread-safe).
 */
final class Calls implements AutoCloseable {

    /** A coordinator's {@code rollcall.probe.max-response-bytes}: larger answers are refused before they are decoded. */
    static final int MAX_RESPONSE_BYTES = 1 << 20;

    /** A unary call's answer, or the status it failed with, and how long it took. */
    record Unary(WorkerInfoResponse answer, Status status, long nanos) {
    }

    /** A {@code ReleaseWorker} call's answer, or the status it failed with, and how long it took. */
    record Release(ReleaseWorkerResponse answer, Status status, long nanos) {
    }

    private final WorkerConformance c;
    private final long timeoutNanos;
    private final ExecutorService executor;
    private final List<ManagedChannel> channels = new ArrayList<>();
    private int count;
    private long slowest;

    Calls(WorkerConformance conformance, int run) {
        this.c = conformance;
        this.timeoutNanos = conformance.callTimeout.toNanos();
        AtomicInteger threads = new AtomicInteger();
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "rollcall-conform-" + run + "-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** A new channel, hence a new connection: plain or TLS as configured, answers bounded as a coordinator bounds them. */
    ManagedChannel open() {
        ManagedChannel ch = Grpc.newChannelBuilderForAddress(c.host, c.port, c.credentials)
                .executor(executor)
                .maxInboundMessageSize(MAX_RESPONSE_BYTES)
                .disableRetry()
                .userAgent("rollcall-conform")
                .build();
        channels.add(ch);
        return ch;
    }

    /**
     * Connects {@code channel} before the first timed call, waiting at most the call timeout, so that
     * W1's time is the worker's and not this JVM's first connection (class loading, the event loop).
     * A channel that does not get ready is left to the call, which then says why.
     */
    void connect(ManagedChannel channel) throws InterruptedException {
        long until = System.nanoTime() + timeoutNanos;
        ConnectivityState state = channel.getState(true);
        while (state != ConnectivityState.READY && state != ConnectivityState.TRANSIENT_FAILURE
                && System.nanoTime() < until) {
            CountDownLatch changed = new CountDownLatch(1);
            channel.notifyWhenStateChanged(state, changed::countDown);
            changed.await(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
            state = channel.getState(false);
        }
    }

    /** {@code WorkerInfo} with the run's deadline; counted and timed when it answers. */
    Unary unary(ManagedChannel channel, WorkerInfoRequest request) {
        long start = System.nanoTime();
        try {
            WorkerInfoResponse r = WorkerServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS).workerInfo(request);
            long took = System.nanoTime() - start;
            count++;
            slowest = Math.max(slowest, took);
            return new Unary(r, null, took);
        } catch (StatusRuntimeException e) {
            return new Unary(null, e.getStatus(), System.nanoTime() - start);
        }
    }

    /** {@code ReleaseWorker} (exact drain) with the run's deadline; not counted with the WorkerInfo calls. */
    Release release(ManagedChannel channel, String holderId, String instanceId) {
        long start = System.nanoTime();
        try {
            ReleaseWorkerResponse r = WorkerServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS)
                    .releaseWorker(ReleaseWorkerRequest.newBuilder().setHolderId(holderId).setInstanceId(instanceId).build());
            return new Release(r, null, System.nanoTime() - start);
        } catch (StatusRuntimeException e) {
            return new Release(null, e.getStatus(), System.nanoTime() - start);
        }
    }

    /** Closes one channel before the run ends. */
    void close(ManagedChannel channel) {
        channel.shutdownNow();
        channels.remove(channel);
    }

    /** How many WorkerInfo calls answered. */
    int count() {
        return count;
    }

    /** The slowest answered WorkerInfo call, in nanoseconds. */
    long slowest() {
        return slowest;
    }

    @Override
    public void close() {
        channels.forEach(ManagedChannel::shutdownNow);
        channels.clear();
        executor.shutdownNow();
    }
}
