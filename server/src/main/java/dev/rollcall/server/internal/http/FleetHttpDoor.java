package dev.rollcall.server.internal.http;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * The HTTP port of a {@link dev.rollcall.server.FleetServer}: {@code /readyz}, {@code /healthz},
 * {@code /metrics} and the console. Thread-safe.
 */
public final class FleetHttpDoor implements AutoCloseable {

    private FleetHttpDoor() {
    }

    /** Binds {@code rollcall.serve.host}:{@code rollcall.serve.http-port} and serves. */
    public static FleetHttpDoor start(WorkerResolver resolver, RollcallConfig config, PrometheusMeterRegistry metrics)
            throws IOException {
        throw new UnsupportedOperationException("not yet");
    }

    public InetSocketAddress address() {
        throw new UnsupportedOperationException("not yet");
    }

    @Override
    public void close() {
    }
}
