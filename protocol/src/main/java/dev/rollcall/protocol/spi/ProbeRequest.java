package dev.rollcall.protocol.spi;

import dev.rollcall.api.WorkerEndpoint;
import io.grpc.Channel;
import java.time.Duration;
import java.util.Objects;

/**
 * One probe's question: whom to ask and within what bounds. Immutable.
 *
 * @param candidate        the candidate as discovery lists it now, with its labels (among them
 *                         {@link WorkerEndpoint#VERSION_LABEL}, the version discovery claims)
 * @param channel          a gRPC channel to the candidate, connected lazily on its first call, owned
 *                         by the resolver (never shut it down); {@code null} when the protocol's
 *                         {@link ProbeCapabilities#connects()} is {@code false}. A protocol that
 *                         speaks something else than gRPC (HTTP) ignores it and opens its own
 *                         connections, with {@code timeout} on each
 * @param timeout          the probe's deadline: the answer, or a failure, within it
 * @param maxResponseBytes the most an answer may take ({@code rollcall.probe.max-response-bytes}):
 *                         a larger one is a failure, never read whole
 */
public record ProbeRequest(WorkerEndpoint candidate, Channel channel, Duration timeout, int maxResponseBytes) {
    public ProbeRequest {
        Objects.requireNonNull(candidate, "candidate");
        Objects.requireNonNull(timeout, "timeout");
        if (maxResponseBytes <= 0) {
            throw new IllegalArgumentException("maxResponseBytes " + maxResponseBytes + " is not positive");
        }
    }
}
