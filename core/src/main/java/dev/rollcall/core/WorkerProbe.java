package dev.rollcall.core;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.core.internal.ProbeClient;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * One-off questions to one worker, for users who want only that and no resolver: opens a
 * connection, asks {@code WorkerInfo} with a deadline, closes the connection.
 *
 * <p>Thread-safe; never blocks the caller. Futures complete on a gRPC network thread: do not block
 * in their callbacks.
 */
public final class WorkerProbe {

    private static final ProbeClient CLIENT = ProbeClient.onSharedEventLoop(1 << 20);

    private WorkerProbe() {
    }

    /**
     * What the worker at {@code endpoint} reports about itself.
     *
     * @return a future that fails with {@link io.grpc.StatusRuntimeException} when the worker cannot
     *         be reached within {@code timeout} or is not a Rollcall worker
     */
    public static CompletableFuture<WorkerInfo> info(WorkerEndpoint endpoint, Duration timeout) {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(timeout, "timeout");
        ManagedChannel channel = CLIENT.open(endpoint);
        return CLIENT.probe(channel, endpoint, timeout).whenComplete((info, failure) -> channel.shutdownNow());
    }

    /**
     * Whether the worker at {@code endpoint} reports exactly {@code expected} as its version.
     *
     * @return a future of {@code true} or {@code false} when the worker answered; it fails (with
     *         {@link io.grpc.StatusRuntimeException}) when the worker could not be reached in time,
     *         so that "another version" and "down" can be told apart
     */
    public static CompletableFuture<Boolean> hasVersion(WorkerEndpoint endpoint, String expected, Duration timeout) {
        Objects.requireNonNull(expected, "expected");
        return info(endpoint, timeout).thenApply(info -> info.version().equals(expected));
    }

    /**
     * {@link #hasVersion(WorkerEndpoint, String, Duration)} for an endpoint written as a URL.
     *
     * @throws IllegalArgumentException when {@code endpoint} is not a valid endpoint URL
     */
    public static CompletableFuture<Boolean> hasVersion(String endpoint, String expected, Duration timeout) {
        return hasVersion(WorkerEndpoint.parse(endpoint), expected, timeout);
    }
}
