package dev.rollcall.core.internal.protocols;

import dev.rollcall.core.internal.ProbeFailures;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.spi.ProbeRequest;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One unary call as a probe, the way every built-in protocol sends it: over the request's channel,
 * with its timeout as the deadline and its size bound on the answer. The future never completes
 * exceptionally: with {@code answered}'s outcome, with {@code failed}'s for an error (or a channel
 * already shut down), or INTERNAL for a call that completed without an answer.
 */
final class UnaryProbe {

    private UnaryProbe() {
    }

    /** {@code failed} that reads every error as {@link ProbeFailures#failed} does. */
    static <Q, A> CompletableFuture<ProbeOutcome> call(ProbeRequest request, MethodDescriptor<Q, A> method, Q question,
                                                       Function<A, ProbeOutcome> answered) {
        return call(request, method, question, answered, t -> ProbeFailures.failed(t, request.timeout()));
    }

    static <Q, A> CompletableFuture<ProbeOutcome> call(ProbeRequest request, MethodDescriptor<Q, A> method, Q question,
                                                       Function<A, ProbeOutcome> answered,
                                                       Function<Throwable, ProbeOutcome> failed) {
        CompletableFuture<ProbeOutcome> result = new CompletableFuture<>();
        ClientCall<Q, A> call;
        try {
            call = request.channel().newCall(method, CallOptions.DEFAULT
                    .withDeadlineAfter(request.timeout().toNanos(), TimeUnit.NANOSECONDS)
                    .withMaxInboundMessageSize(request.maxResponseBytes()));
        } catch (RuntimeException shutDown) {
            result.complete(ProbeFailures.failed(shutDown, request.timeout()));
            return result;
        }
        ClientCalls.asyncUnaryCall(call, question, new StreamObserver<>() {
            @Override
            public void onNext(A answer) {
                result.complete(answered.apply(answer));
            }

            @Override
            public void onError(Throwable t) {
                result.complete(failed.apply(t));
            }

            @Override
            public void onCompleted() {
                result.complete(new ProbeOutcome.Failed(Status.Code.INTERNAL,
                        "INTERNAL: " + method.getFullMethodName() + " completed without a response"));
            }
        });
        return result;
    }
}
