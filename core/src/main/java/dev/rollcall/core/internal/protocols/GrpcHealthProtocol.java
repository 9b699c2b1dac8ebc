package dev.rollcall.core.internal.protocols;

import dev.rollcall.api.ServingState;
import dev.rollcall.core.internal.ProbeFailures;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.spi.DiscoveryAnswers;
import dev.rollcall.protocol.spi.ProbeCapabilities;
import dev.rollcall.protocol.spi.ProbeCapabilities.Source;
import dev.rollcall.protocol.spi.ProbeProtocol;
import dev.rollcall.protocol.spi.ProbeRequest;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;

/**
 * {@code grpc.health.v1.Health} as a probe protocol: {@code Check} for a probe, {@code Watch} for
 * pushes. {@code SERVING} is SERVING; {@code NOT_SERVING}, {@code SERVICE_UNKNOWN}, {@code UNKNOWN}
 * and a {@code Check} answered {@code NOT_FOUND} (a server that does not know the service) are
 * NOT_SERVING, which keeps the worker out as DRAINING does. The version is the candidate's
 * {@code rollcall.version} label, its capabilities its {@code rollcall.capabilities} label; a
 * candidate without a version, or with capabilities that are not a list, is never asked (the probe
 * fails naming the label). Stateless and thread-safe.
 */
final class GrpcHealthProtocol implements ProbeProtocol {

    private static final ProbeCapabilities SEES = new ProbeCapabilities(Source.DISCOVERY, Source.DISCOVERY,
            Source.WORKER, Source.DISCOVERY, Source.NONE, true, true);

    private final HealthCheckRequest question;

    GrpcHealthProtocol(String service) {
        this.question = HealthCheckRequest.newBuilder().setService(service).build();
    }

    @Override
    public ProbeCapabilities capabilities() {
        return SEES;
    }

    @Override
    public CompletableFuture<ProbeOutcome> probe(ProbeRequest request) {
        ProbeOutcome claim = DiscoveryAnswers.answer(request.candidate(), ServingState.SERVING, GrpcHealthProtocolProvider.NAME);
        if (!claim.answered()) {
            return CompletableFuture.completedFuture(claim);
        }
        // A server that does not know the service answers Check NOT_FOUND: it does not serve it.
        return UnaryProbe.call(request, HealthGrpc.getCheckMethod(), question,
                response -> answer(request, response.getStatus()),
                t -> Status.fromThrowable(t).getCode() == Status.Code.NOT_FOUND
                        ? DiscoveryAnswers.answer(request.candidate(), ServingState.NOT_SERVING,
                                GrpcHealthProtocolProvider.NAME)
                        : ProbeFailures.failed(t, request.timeout()));
    }

    @Override
    public Watch watch(ProbeRequest request, WatchListener listener) {
        ProbeOutcome claim = DiscoveryAnswers.answer(request.candidate(), ServingState.SERVING, GrpcHealthProtocolProvider.NAME);
        if (!claim.answered()) {
            listener.answer(claim);
            return () -> { };
        }
        ClientCall<HealthCheckRequest, HealthCheckResponse> call;
        try {
            call = request.channel().newCall(HealthGrpc.getWatchMethod(),
                    CallOptions.DEFAULT.withMaxInboundMessageSize(request.maxResponseBytes()));
        } catch (RuntimeException shutDown) {
            listener.ended(Status.fromThrowable(shutDown));
            return () -> { };
        }
        ClientCalls.asyncServerStreamingCall(call, question, new StreamObserver<>() {
            /** The last status pushed; only the call's callbacks touch it, one at a time. */
            private HealthCheckResponse.ServingStatus last;

            @Override
            public void onNext(HealthCheckResponse response) {
                if (response.getStatus() != last) { // the server repeats nothing, but a status is all it says
                    last = response.getStatus();
                    listener.answer(answer(request, last));
                }
            }

            @Override
            public void onError(Throwable t) {
                listener.ended(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                listener.ended(Status.UNAVAILABLE.withDescription("the worker ended its Health/Watch stream"));
            }
        });
        return () -> call.cancel("no longer watched", null);
    }

    /** The candidate's claim, in the state {@code status} says. */
    private static ProbeOutcome answer(ProbeRequest request, HealthCheckResponse.ServingStatus status) {
        ServingState state = status == HealthCheckResponse.ServingStatus.SERVING
                ? ServingState.SERVING : ServingState.NOT_SERVING;
        return DiscoveryAnswers.answer(request.candidate(), state, GrpcHealthProtocolProvider.NAME);
    }

    @Override
    public String toString() {
        return GrpcHealthProtocolProvider.NAME + " (service '" + question.getService() + "')";
    }
}
