package dev.rollcall.server.xds;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.server.FleetServer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * A fleet served over xDS for a test: real workers on loopback, a discovery the test changes, a
 * resolver that accepts 1.x and rejects every other version, and a {@link FleetServer} over it (gRPC
 * only) with the settings the test gives. Closes all of it, channels included.
 */
final class AdsDoorFleet implements AutoCloseable {

    static final Duration WAIT = Duration.ofSeconds(20);

    final PushDiscovery discovery = new PushDiscovery("ads-door-fleet");
    final WorkerResolver resolver;
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final FleetServer server;
    private final List<RollcallWorker> workers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    private AdsDoorFleet(Map<String, String> serve) throws Exception {
        discovery.push(List.of());
        resolver = WorkerResolver.builder().name("ads-door-fleet").discovery(discovery)
                .policy(w -> w.version().startsWith("1.") ? Verdict.accept()
                        : Verdict.reject("version " + w.version() + " is not 1.x"))
                .fetchSchemas(false).probeTimeout(Duration.ofSeconds(5)).build();
        try {
            server = FleetServer.builder(resolver).config(RollcallConfig.of(serve)).host("127.0.0.1").port(0)
                    .http(false).meterRegistry(meters).start();
        } catch (Exception e) {
            resolver.close();
            throw e;
        }
    }

    static AdsDoorFleet start() throws Exception {
        return new AdsDoorFleet(Map.of());
    }

    static AdsDoorFleet start(Map<String, String> serve) throws Exception {
        return new AdsDoorFleet(serve);
    }

    /** Starts a worker of {@code version} (not yet listed by discovery); labels as key, value pairs. */
    RollcallWorker worker(String version, String... labels) throws Exception {
        RollcallWorker.Builder b = RollcallWorker.builder().version(version).drainQuiet(Duration.ofMillis(50));
        for (int i = 0; i + 1 < labels.length; i += 2) {
            b.label(labels[i], labels[i + 1]);
        }
        RollcallWorker w = b.start();
        workers.add(w);
        return w;
    }

    /** Makes discovery list exactly {@code listed}. */
    void list(RollcallWorker... listed) {
        List<WorkerEndpoint> endpoints = new ArrayList<>();
        for (RollcallWorker w : listed) {
            endpoints.add(w.endpoint());
        }
        discovery.push(endpoints);
    }

    int port() {
        return server.grpcAddress().getPort();
    }

    /** A plaintext channel (a connection of its own) to the server, closed with the fleet. */
    ManagedChannel channel() {
        return channel(port(), UnaryOperator.identity());
    }

    /** A plaintext channel to {@code port} on loopback (the server's, or a proxy's before it). */
    ManagedChannel channel(int port, UnaryOperator<NettyChannelBuilder> tune) {
        ManagedChannel channel = tune.apply(NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()).build();
        channels.add(channel);
        return channel;
    }

    /** The server's {@code rollcall.serve.xds.streams} gauge. */
    double streams() {
        return meters.get("rollcall.serve.xds.streams").gauge().value();
    }

    /** The server's {@code rollcall.serve.xds.nacks} counter. */
    double nacks() {
        return meters.get("rollcall.serve.xds.nacks").functionCounter().count();
    }

    /** The server's {@code rollcall.serve.xds.slow-readers} counter. */
    double slowReadersEnded() {
        return meters.get("rollcall.serve.xds.slow-readers").functionCounter().count();
    }

    @Override
    public void close() throws Exception {
        for (ManagedChannel c : channels) {
            c.shutdownNow();
        }
        for (ManagedChannel c : channels) {
            c.awaitTermination(5, TimeUnit.SECONDS);
        }
        server.close();
        resolver.close();
        for (RollcallWorker w : workers) {
            w.close();
        }
    }
}
