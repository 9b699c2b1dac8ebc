package dev.rollcall.worker;

import static org.awaitility.Awaitility.await;

import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ReleaseWorkerResponse;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * The coordinator's half of exact drain, written with the generated stubs (the worker module does
 * not depend on core): one channel, one {@code WatchWorkerInfo} stream (with a holder id or
 * without, as an older coordinator), and {@code ReleaseWorker} over the same channel. Records every
 * answer and how the stream ended.
 */
final class TestCoordinator implements AutoCloseable {

    static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final ManagedChannel channel;
    private final String holderId;
    private final List<WorkerInfoResponse> answers = new CopyOnWriteArrayList<>();
    private final AtomicReference<ClientCallStreamObserver<WorkerInfoRequest>> call = new AtomicReference<>();
    private final AtomicReference<Status> ended = new AtomicReference<>();

    private TestCoordinator(ManagedChannel channel, String holderId) {
        this.channel = channel;
        this.holderId = holderId;
    }

    /** Watches the worker on {@code port} of 127.0.0.1; {@code holderId} "" watches as an older coordinator. */
    static TestCoordinator watch(int port, String holderId) {
        return watch(port, WorkerInfoRequest.newBuilder().setHolderId(holderId).build());
    }

    /** Watches with exactly {@code request}. */
    static TestCoordinator watch(int port, WorkerInfoRequest request) {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        TestCoordinator c = new TestCoordinator(channel, request.getHolderId());
        WorkerServiceGrpc.newStub(channel).watchWorkerInfo(request, new ClientResponseObserver<WorkerInfoRequest,
                WorkerInfoResponse>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<WorkerInfoRequest> requests) {
                c.call.set(requests);
            }

            @Override
            public void onNext(WorkerInfoResponse answer) {
                c.answers.add(answer);
            }

            @Override
            public void onError(Throwable t) {
                c.ended.set(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                c.ended.set(Status.OK);
            }
        });
        return c;
    }

    /** Waits for an answer that matches, and returns the first one that does. */
    WorkerInfoResponse awaitAnswer(Predicate<WorkerInfoResponse> match) {
        await().atMost(TIMEOUT).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(2)).until(() -> answers.stream().anyMatch(match) || ended.get() != null);
        return answers.stream().filter(match).findFirst()
                .orElseThrow(() -> new AssertionError("the stream ended (" + ended.get() + ") without the answer; got "
                        + answers));
    }

    /** Every answer received so far, in order. */
    List<WorkerInfoResponse> answers() {
        return List.copyOf(answers);
    }

    /** The newest answer received. */
    WorkerInfoResponse latest() {
        return answers.get(answers.size() - 1);
    }

    /** How the stream ended, waiting for it to end. */
    Status awaitEnd() {
        await().atMost(TIMEOUT).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(2)).until(() -> ended.get() != null);
        return ended.get();
    }

    /** Releases the worker whose instance is {@code instanceId}, under this coordinator's holder id. */
    ReleaseWorkerResponse release(String instanceId) {
        return release(holderId, instanceId);
    }

    ReleaseWorkerResponse release(String holder, String instanceId) {
        return WorkerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .releaseWorker(ReleaseWorkerRequest.newBuilder().setHolderId(holder).setInstanceId(instanceId).build());
    }

    /** Cancels the watch, as a coordinator that stops watching. */
    void cancel() {
        call.get().cancel("the test coordinator stops watching", null);
    }

    @Override
    public void close() {
        try {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
