package dev.rollcall.core.internal.drain;

import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ReleaseWorkerResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Sends {@code ReleaseWorker} over a worker's kept channel, with a deadline and a bound on the
 * answer. The channel is the one the worker's {@code WatchWorkerInfo} stream lives on, so the
 * release reaches the process that holder stream watches (or fails, when a successor answers there:
 * {@code FAILED_PRECONDITION}). Thread-safe.
 */
public final class ReleaseCall implements DrainReleases.Releaser {

    /** An answer is one small number: more than this is a broken or hostile worker. */
    private static final int MAX_ANSWER_BYTES = 1024;

    private final Function<String, ManagedChannel> channels;
    private final Duration deadline;

    /**
     * @param channels the kept channel of the worker at a URL, or null when it has none (serial context)
     * @param deadline each call's deadline ({@code probe.timeout})
     */
    public ReleaseCall(Function<String, ManagedChannel> channels, Duration deadline) {
        this.channels = channels;
        this.deadline = deadline;
    }

    @Override
    public void release(String url, String holderId, String instanceId, Consumer<Status> then) {
        ManagedChannel channel = channels.apply(url);
        if (channel == null) {
            then.accept(Status.UNAVAILABLE.withDescription("no kept connection to " + url));
            return;
        }
        ClientCall<ReleaseWorkerRequest, ReleaseWorkerResponse> call;
        try {
            call = channel.newCall(WorkerServiceGrpc.getReleaseWorkerMethod(), CallOptions.DEFAULT
                    .withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS)
                    .withMaxInboundMessageSize(MAX_ANSWER_BYTES));
        } catch (RuntimeException shutDown) {
            then.accept(Status.fromThrowable(shutDown));
            return;
        }
        ReleaseWorkerRequest request = ReleaseWorkerRequest.newBuilder().setHolderId(holderId)
                .setInstanceId(instanceId).build();
        ClientCalls.asyncUnaryCall(call, request, new StreamObserver<>() {
            @Override
            public void onNext(ReleaseWorkerResponse response) {
            }

            @Override
            public void onError(Throwable t) {
                then.accept(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                then.accept(Status.OK);
            }
        });
    }
}
