package dev.rollcall.server.internal.http;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.console.InternalConsoleHost;
import dev.rollcall.console.RollcallConsole;
import dev.rollcall.core.RollcallMetrics;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.server.ServerKeys;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.Map;

/**
 * The HTTP port of a {@link dev.rollcall.server.FleetServer}: {@code /readyz}, {@code /healthz},
 * {@code /metrics} and the console, on one port: the console's server, with these three paths
 * hosted beside its page ({@link InternalConsoleHost}), so every door of the console holds for them
 * (request and write timeouts, header limits, the connection cap, its {@code Host} rule, widened to
 * IP literals for these three). The port is a service's, meant to be reached from elsewhere: binding
 * a non-loopback address needs no {@code rollcall.console.allow-remote}; the page then answers only
 * connections from this host unless that key is true. Binds the resolver's meters
 * ({@link RollcallMetrics}) to the registry it serves. Thread-safe.
 */
public final class FleetHttpDoor implements AutoCloseable {

    private final RollcallConsole console;

    private FleetHttpDoor(RollcallConsole console) {
        this.console = console;
    }

    /**
     * Binds {@code rollcall.serve.host}:{@code rollcall.serve.http-port} and serves.
     *
     * @throws ConfigurationException naming the key and value that are wrong ({@code rollcall.serve.*}
     *         or {@code rollcall.console.*})
     * @throws IOException when the port cannot be bound
     */
    public static FleetHttpDoor start(WorkerResolver resolver, RollcallConfig config, PrometheusMeterRegistry metrics)
            throws IOException {
        String host = config.settings().get(ServerKeys.HOST);
        int port = config.settings().get(ServerKeys.HTTP_PORT);
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            throw ConfigurationException.invalid(ServerKeys.HOST.name(), host, "an address of this host, or a name"
                    + " that resolves to one");
        }
        new RollcallMetrics(resolver).bindTo(metrics);
        ProbeEndpoints endpoints = new ProbeEndpoints(resolver, metrics);
        RollcallConsole.Builder console = RollcallConsole.builder(resolver).config(config).address(address);
        try {
            return new FleetHttpDoor(InternalConsoleHost.start(console, Map.of(
                    "/readyz", accept -> endpoints.readiness(),
                    "/healthz", accept -> endpoints.health(),
                    "/metrics", endpoints::metrics)));
        } catch (UncheckedIOException e) {
            throw new IOException("rollcall serve cannot listen for HTTP on " + host + ":" + port + " ("
                    + ServerKeys.HOST.name() + ", " + ServerKeys.HTTP_PORT.name() + "): " + e.getCause().getMessage(),
                    e.getCause());
        }
    }

    /** Where it listens (with the port chosen when 0 was asked for). */
    public InetSocketAddress address() {
        return console.address();
    }

    /** Closes the port and every connection. Idempotent. */
    @Override
    public void close() {
        console.close();
    }
}
