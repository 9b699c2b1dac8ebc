package dev.rollcall.worker;

import dev.rollcall.api.Settings;
import io.grpc.netty.NettyServerBuilder;
import java.util.concurrent.TimeUnit;

/**
 * What a worker's server takes from its clients, validated: {@code rollcall.worker.max-request-bytes},
 * {@code max-watches}, {@code max-watches-per-connection}, {@code max-calls-per-connection}, builder
 * values winning over the keys. Also the HTTP/2 keepalive pings it permits: every
 * {@link #PERMIT_KEEPALIVE_SECONDS} s, with or without calls, half of grpc-java's (and grpc-go's)
 * 10 s floor for a client's keepalive, so that a coordinator pinging at that floor is never sent a
 * {@code too_many_pings} GOAWAY, even with the timers' jitter.
 */
record WorkerLimits(int maxRequestBytes, int maxWatches, int maxWatchesPerConnection, int maxCallsPerConnection) {

    static final int PERMIT_KEEPALIVE_SECONDS = 5;

    /** Builder overrides; a null field reads its key. */
    record Overrides(Integer maxRequestBytes, Integer maxWatches, Integer maxWatchesPerConnection,
                     Integer maxCallsPerConnection) {
    }

    /** Reads the keys of {@code worker} (scoped to {@code rollcall.worker.}) that {@code set} leaves open. */
    static WorkerLimits read(Settings worker, Overrides set) {
        return new WorkerLimits(
                set.maxRequestBytes() != null ? set.maxRequestBytes()
                        : worker.get(WorkerKeys.MAX_REQUEST_BYTES),
                set.maxWatches() != null ? set.maxWatches()
                        : worker.get(WorkerKeys.MAX_WATCHES),
                set.maxWatchesPerConnection() != null ? set.maxWatchesPerConnection()
                        : worker.get(WorkerKeys.MAX_WATCHES_PER_CONNECTION),
                set.maxCallsPerConnection() != null ? set.maxCallsPerConnection()
                        : worker.get(WorkerKeys.MAX_CALLS_PER_CONNECTION));
    }

    /** The transport's part: keepalive permits, calls per connection, the request bound. */
    void applyTo(NettyServerBuilder server) {
        server.permitKeepAliveTime(PERMIT_KEEPALIVE_SECONDS, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .maxConcurrentCallsPerConnection(maxCallsPerConnection)
                .maxInboundMessageSize(Integer.MAX_VALUE) // Flight's own default: record batches are big
                .addStreamTracerFactory(RequestSizeLimit.of(maxRequestBytes))
                .intercept(RequestSizeLimit.quietOnceCancelled());
    }

    /** The service's part: its watch streams. */
    void applyTo(WorkerInfoService.Builder info) {
        info.maxWatches(maxWatches).maxWatchesPerConnection(maxWatchesPerConnection);
    }
}
