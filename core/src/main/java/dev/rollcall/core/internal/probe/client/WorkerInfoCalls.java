package dev.rollcall.core.internal.probe.client;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.internal.ProbeFailures;
import dev.rollcall.core.internal.drain.HolderIds;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.internal.AnswerCheck;
import dev.rollcall.protocol.internal.WireFormat;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@link ProbeClient}'s {@code rollcall.v1} calls over a channel it built: the unary
 * {@code WorkerInfo} probe, the {@code WatchWorkerInfo} stream, and the probe that stays open as the
 * stream. Each answer is checked against the protocol's bounds before it is decoded; outcomes are
 * values, never exceptions. Callbacks on network threads. Thread-safe (immutable).
 */
final class WorkerInfoCalls {

    private final int maxResponseBytes;
    /** Each worker's {@code holder_id} on its {@code WatchWorkerInfo} requests (exact drain); null for none. */
    private final HolderIds holderIds;

    WorkerInfoCalls(int maxResponseBytes, HolderIds holderIds) {
        this.maxResponseBytes = maxResponseBytes;
        this.holderIds = holderIds;
    }

    /** See {@link ProbeClient#probe}. */
    CompletableFuture<ProbeOutcome> probe(ManagedChannel channel, WorkerEndpoint endpoint, Duration timeout) {
        CompletableFuture<ProbeOutcome> result = new CompletableFuture<>();
        ClientCall<WorkerInfoRequest, WorkerInfoResponse> call;
        try {
            call = channel.newCall(WorkerServiceGrpc.getWorkerInfoMethod(), CallOptions.DEFAULT
                    .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                    .withMaxInboundMessageSize(maxResponseBytes));
        } catch (RuntimeException shutDown) {
            result.complete(ProbeFailures.failed(shutDown, timeout));
            return result;
        }
        ClientCalls.asyncUnaryCall(call, WorkerInfoRequest.getDefaultInstance(), new StreamObserver<>() {
            @Override
            public void onNext(WorkerInfoResponse response) {
                String problem = AnswerCheck.problem(response);
                result.complete(problem != null
                        ? new ProbeOutcome.Failed(Status.Code.INTERNAL, "malformed answer: " + problem)
                        : answered(endpoint, response));
            }

            @Override
            public void onError(Throwable t) {
                result.complete(ProbeFailures.failed(t, timeout));
            }

            @Override
            public void onCompleted() {
                if (!result.isDone()) {
                    result.complete(new ProbeOutcome.Failed(Status.Code.INTERNAL,
                            "INTERNAL: WorkerInfo completed without a response"));
                }
            }
        });
        return result;
    }

    private static ProbeOutcome.Answered answered(WorkerEndpoint endpoint, WorkerInfoResponse response) {
        return new ProbeOutcome.Answered(WireFormat.toWorkerInfo(endpoint, response),
                WireFormat.fromWire(response.getState()), response.getRevision(), WireFormat.holders(response));
    }

    /** See {@link ProbeClient#watch}. */
    ProbeClient.Watch watch(ManagedChannel channel, WorkerEndpoint endpoint, Duration heartbeat,
                            ProbeClient.StreamListener listener) {
        ClientCall<WorkerInfoRequest, WorkerInfoResponse> call;
        try {
            call = channel.newCall(WorkerServiceGrpc.getWatchWorkerInfoMethod(),
                    CallOptions.DEFAULT.withMaxInboundMessageSize(maxResponseBytes));
        } catch (RuntimeException shutDown) {
            listener.ended(Status.fromThrowable(shutDown));
            return () -> { };
        }
        WorkerInfoRequest.Builder asked = WorkerInfoRequest.newBuilder()
                .setHeartbeatMillis((int) Math.min(Integer.MAX_VALUE, heartbeat.toMillis()));
        if (holderIds != null) {
            asked.setHolderId(holderIds.of(endpoint.url())); // unset otherwise: the request of a coordinator before exact drain
        }
        WorkerInfoRequest request = asked.build();
        // A call listener, not the stub's StreamObserver: the observer is handed a stream's end as an
        // exception, whose stack trace is taken on the event loop for every stream that ends (each
        // leaver of a churn, every worker's when a resolver closes); the status is what the listener needs.
        final class Observer extends ClientCall.Listener<WorkerInfoResponse> implements ProbeClient.Watch {
            /** The last answer taken; only the call's callbacks touch it, one at a time. */
            private WorkerInfoResponse last;
            private volatile long heartbeatMillis;

            @Override
            public void onMessage(WorkerInfoResponse response) {
                if (take(response)) {
                    call.request(1);
                }
            }

            /** Whether the stream goes on after {@code response}. */
            private boolean take(WorkerInfoResponse response) {
                heartbeatMillis = Integer.toUnsignedLong(response.getHeartbeatMillis());
                if (last != null && repeats(response, last)) {
                    listener.repeated();
                    return true;
                }
                last = response;
                String problem = AnswerCheck.problem(response);
                if (problem != null) {
                    listener.answer(new ProbeOutcome.Failed(Status.Code.INTERNAL, "malformed answer: " + problem));
                    call.cancel("malformed answer", null);
                    return false;
                }
                listener.answer(answered(endpoint, response));
                return true;
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                listener.ended(status.isOk()
                        ? Status.UNAVAILABLE.withDescription("the worker ended its WatchWorkerInfo stream") : status);
            }

            @Override
            public void cancel() {
                call.cancel("no longer watched", null);
            }

            @Override
            public long heartbeatMillis() {
                return heartbeatMillis;
            }
        }
        Observer observer = new Observer();
        // What the stub's asyncServerStreamingCall does: one answer asked for at a time.
        try {
            call.start(observer, new Metadata());
            call.request(1);
            call.sendMessage(request);
            call.halfClose();
        } catch (RuntimeException | Error e) {
            call.cancel("the WatchWorkerInfo call could not start", e);
            throw e;
        }
        return observer;
    }

    /**
     * Whether {@code answer} says what {@code last} said: a worker stamps each distinct answer of
     * its process with a new revision, so one instance's same revision is the same answer (and a
     * comparison of two numbers, not of two messages); without revisions, the same message.
     */
    private static boolean repeats(WorkerInfoResponse answer, WorkerInfoResponse last) {
        if (answer.getRevision() != 0 || last.getRevision() != 0) {
            return answer.getRevision() == last.getRevision() && answer.getInstanceId().equals(last.getInstanceId());
        }
        return answer.equals(last);
    }

    /** See {@link ProbeClient#watchFirst}; the first answer's deadline is kept on {@code timer}. */
    ProbeClient.Watched watchFirst(ManagedChannel channel, EventLoop timer, WorkerEndpoint endpoint,
                                   Duration timeout, Duration heartbeat, ProbeClient.StreamListener listener) {
        CompletableFuture<ProbeOutcome> first = new CompletableFuture<>();
        // 0: waiting for the first answer; 1: answered, the stream is live; 2: over before an answer.
        AtomicInteger phase = new AtomicInteger();
        AtomicReference<Runnable> onTimeout = new AtomicReference<>();
        ScheduledFuture<?> deadline = timer.schedule(() -> {
            if (phase.compareAndSet(0, 2)) {
                first.complete(new ProbeOutcome.Failed(Status.Code.DEADLINE_EXCEEDED,
                        "DEADLINE_EXCEEDED: no answer within " + timeout.toMillis() + " ms"));
                Runnable cancel = onTimeout.get();
                if (cancel != null) {
                    cancel.run();
                }
            }
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        ProbeClient.Watch stream = watch(channel, endpoint, heartbeat, new ProbeClient.StreamListener() {
            @Override
            public void answer(ProbeOutcome answer) {
                if (phase.compareAndSet(0, 1)) {
                    deadline.cancel(false);
                    first.complete(answer);
                } else if (phase.get() == 1) {
                    listener.answer(answer);
                }
            }

            @Override
            public void repeated() {
                if (phase.get() == 1) {
                    listener.repeated();
                }
            }

            @Override
            public void ended(Status status) {
                if (phase.compareAndSet(0, 2)) {
                    deadline.cancel(false);
                    first.complete(ProbeFailures.failed(status.asRuntimeException(), timeout));
                } else if (phase.get() == 1) {
                    listener.ended(status);
                }
            }
        });
        onTimeout.set(stream::cancel);
        if (phase.get() == 2) {
            stream.cancel(); // timed out before the call was even started
        }
        return new ProbeClient.Watched(first, stream);
    }
}
