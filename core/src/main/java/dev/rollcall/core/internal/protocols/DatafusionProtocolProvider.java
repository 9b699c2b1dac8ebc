package dev.rollcall.core.internal.protocols;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.core.internal.ProbeFailures;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.datafusion.GetWorkerInfoRequest;
import dev.rollcall.protocol.datafusion.GetWorkerInfoResponse;
import dev.rollcall.protocol.datafusion.WorkerServiceGrpc;
import dev.rollcall.protocol.spi.ProbeCapabilities;
import dev.rollcall.protocol.spi.ProbeCapabilities.Source;
import dev.rollcall.protocol.spi.ProbeProtocol;
import dev.rollcall.protocol.spi.ProbeProtocolProvider;
import dev.rollcall.protocol.spi.ProbeRequest;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code datafusion-distributed}: {@code /worker.WorkerService/GetWorkerInfo}, an empty request
 * answered with {@code string version = 1} and nothing else. No instance id and no state: a worker
 * is SERVING while it answers, and a restart in place is seen only through its connection dropping
 * (the resolver probes a worker again when its kept connection leaves READY). Polled, never pushed.
 */
public final class DatafusionProtocolProvider implements ProbeProtocolProvider {

    static final String NAME = "datafusion-distributed";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ProbeProtocol create(Settings settings) {
        return new DatafusionProtocol();
    }

    /** {@code GetWorkerInfo} with a deadline. Stateless and thread-safe. */
    static final class DatafusionProtocol implements ProbeProtocol {
        private static final ProbeCapabilities SEES = new ProbeCapabilities(Source.WORKER, Source.NONE,
                Source.NONE, Source.NONE, Source.NONE, false, true);

        @Override
        public ProbeCapabilities capabilities() {
            return SEES;
        }

        @Override
        public CompletableFuture<ProbeOutcome> probe(ProbeRequest request) {
            CompletableFuture<ProbeOutcome> result = new CompletableFuture<>();
            ClientCall<GetWorkerInfoRequest, GetWorkerInfoResponse> call;
            try {
                call = request.channel().newCall(WorkerServiceGrpc.getGetWorkerInfoMethod(), CallOptions.DEFAULT
                        .withDeadlineAfter(request.timeout().toNanos(), TimeUnit.NANOSECONDS)
                        .withMaxInboundMessageSize(request.maxResponseBytes()));
            } catch (RuntimeException shutDown) {
                result.complete(ProbeFailures.failed(shutDown, request.timeout()));
                return result;
            }
            ClientCalls.asyncUnaryCall(call, GetWorkerInfoRequest.getDefaultInstance(), new StreamObserver<>() {
                @Override
                public void onNext(GetWorkerInfoResponse response) {
                    // The resolver checks the version's bounds, as for every protocol's answer.
                    result.complete(new ProbeOutcome.Answered(new WorkerInfo(request.candidate(),
                            response.getVersion(), "", Map.of(), List.of()), ServingState.SERVING));
                }

                @Override
                public void onError(Throwable t) {
                    result.complete(ProbeFailures.failed(t, request.timeout()));
                }

                @Override
                public void onCompleted() {
                    result.complete(new ProbeOutcome.Failed(Status.Code.INTERNAL,
                            "INTERNAL: GetWorkerInfo completed without a response"));
                }
            });
            return result;
        }

        @Override
        public String toString() {
            return NAME;
        }
    }
}
