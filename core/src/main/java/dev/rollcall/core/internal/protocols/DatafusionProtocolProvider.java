package dev.rollcall.core.internal.protocols;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.datafusion.GetWorkerInfoRequest;
import dev.rollcall.protocol.datafusion.WorkerServiceGrpc;
import dev.rollcall.protocol.spi.ProbeCapabilities;
import dev.rollcall.protocol.spi.ProbeCapabilities.Source;
import dev.rollcall.protocol.spi.ProbeProtocol;
import dev.rollcall.protocol.spi.ProbeProtocolProvider;
import dev.rollcall.protocol.spi.ProbeRequest;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * {@code datafusion-distributed}: {@code /worker.WorkerService/GetWorkerInfo}, an empty request
 * answered with {@code string version = 1} and nothing else. No instance id and no state: a worker
 * is SERVING while it answers, and a restart in place is seen only through its connection dropping
 * (the resolver probes a worker again when its kept connection leaves READY). Polled, never pushed.
 * A worker that never called {@code with_version()} (their default) answers {@code ""}: that is its
 * version, judged by the policy like any other ({@code exact} lists it as
 * {@code rollcall.policy.exact.accept-no-version}), and shown as {@code (no version)}.
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
            // The resolver checks the version's bounds, as for every protocol's answer.
            return UnaryProbe.call(request, WorkerServiceGrpc.getGetWorkerInfoMethod(),
                    GetWorkerInfoRequest.getDefaultInstance(), response -> new ProbeOutcome.Answered(new WorkerInfo(
                            request.candidate(), response.getVersion(), "", Map.of(), List.of()), ServingState.SERVING));
        }

        @Override
        public String toString() {
            return NAME;
        }
    }
}
