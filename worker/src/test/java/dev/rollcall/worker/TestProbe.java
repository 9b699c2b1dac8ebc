package dev.rollcall.worker;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.protocol.internal.WireFormat;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A plain {@code WorkerInfo} call for the worker's own tests, which cannot use the resolver's
 * {@code WorkerProbe} (the worker module does not depend on core): one channel per call, a deadline,
 * the answer converted as a coordinator converts it.
 */
final class TestProbe {

    private TestProbe() {
    }

    static CompletableFuture<WorkerInfo> info(WorkerEndpoint endpoint, Duration timeout) {
        return CompletableFuture.supplyAsync(() -> {
            ManagedChannel channel = NettyChannelBuilder.forAddress(endpoint.host(), endpoint.port()).usePlaintext().build();
            try {
                return WireFormat.toWorkerInfo(endpoint, WorkerServiceGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
                        .workerInfo(WorkerInfoRequest.getDefaultInstance()));
            } finally {
                channel.shutdownNow();
            }
        });
    }
}
