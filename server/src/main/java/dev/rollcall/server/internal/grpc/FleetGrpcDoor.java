package dev.rollcall.server.internal.grpc;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * The gRPC port of a {@link dev.rollcall.server.FleetServer}: {@code rollcall.v1.FleetService} with
 * its doors (TLS, bearer token, limits). Thread-safe.
 */
public final class FleetGrpcDoor implements AutoCloseable {

    private FleetGrpcDoor() {
    }

    /**
     * Binds {@code rollcall.serve.host}:{@code rollcall.serve.port} and serves.
     *
     * @param meters  where the door's meters go; {@code extra} too when not null
     */
    public static FleetGrpcDoor start(WorkerResolver resolver, RollcallConfig config, String instanceId,
                                      MeterRegistry meters, MeterRegistry extra) throws IOException {
        throw new UnsupportedOperationException("not yet");
    }

    public InetSocketAddress address() {
        throw new UnsupportedOperationException("not yet");
    }

    public int watchers() {
        return 0;
    }

    public int holds() {
        return 0;
    }

    @Override
    public void close() {
    }
}
