package dev.rollcall.server;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.ManagedChannel;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A test's fleet behind a {@link FleetServer}: real workers on loopback, a discovery the test
 * changes, a resolver that accepts 1.x and rejects every other version, and the server over it
 * (gRPC only). Closes all of it, channels included.
 */
final class ServedFleet implements AutoCloseable {

    static final Duration WAIT = Duration.ofSeconds(20);

    final PushDiscovery discovery = new PushDiscovery("served-fleet");
    final WorkerResolver resolver;
    /** The server's own meters, as a host's registry gets them. */
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final FleetServer server;
    private final List<RollcallWorker> workers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    private ServedFleet(boolean exactDrain, Map<String, String> serve) throws Exception {
        discovery.push(List.of());
        resolver = WorkerResolver.builder().name("served").discovery(discovery)
                .policy(w -> w.version().startsWith("1.") ? Verdict.accept()
                        : Verdict.reject("version " + w.version() + " is not 1.x"))
                .fetchSchemas(false).probeTimeout(Duration.ofSeconds(5)).exactDrain(exactDrain).build();
        try {
            server = FleetServer.builder(resolver).config(RollcallConfig.of(serve)).host("127.0.0.1").port(0)
                    .http(false).meterRegistry(meters).start();
        } catch (Exception e) {
            resolver.close();
            throw e;
        }
    }

    static ServedFleet start() throws Exception {
        return new ServedFleet(false, Map.of());
    }

    static ServedFleet start(boolean exactDrain, Map<String, String> serve) throws Exception {
        return new ServedFleet(exactDrain, serve);
    }

    /** Starts a worker of {@code version} (not yet listed by discovery). */
    RollcallWorker worker(String version, String... labels) throws Exception {
        return worker(version, Duration.ofMillis(200), labels);
    }

    /**
     * Starts a worker of {@code version} whose drain waits {@code drainQuiet} for calls (an exact
     * drain ends earlier, when its last holder lets go).
     */
    RollcallWorker worker(String version, Duration drainQuiet, String... labels) throws Exception {
        RollcallWorker.Builder b = RollcallWorker.builder().version(version).shutdownGrace(Duration.ofSeconds(30))
                .drainQuiet(drainQuiet);
        for (int i = 0; i + 1 < labels.length; i += 2) {
            b.label(labels[i], labels[i + 1]);
        }
        RollcallWorker w = b.start();
        workers.add(w);
        return w;
    }

    /** Starts a worker of {@code version} that says it can do {@code capabilities} (not yet listed). */
    RollcallWorker capable(String version, String... capabilities) throws Exception {
        return capable(version, Duration.ofMillis(200), capabilities);
    }

    /** As {@link #capable(String, String...)}, with a drain that waits {@code drainQuiet} for calls. */
    RollcallWorker capable(String version, Duration drainQuiet, String... capabilities) throws Exception {
        RollcallWorker w = RollcallWorker.builder().version(version).capabilities(capabilities)
                .shutdownGrace(Duration.ofSeconds(30)).drainQuiet(drainQuiet).start();
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

    /** A plaintext channel to the server, closed with the fleet. */
    ManagedChannel channel() {
        return channel(server.grpcAddress().getPort());
    }

    /** A plaintext channel to {@code port} on loopback (the server's, or a proxy's before it). */
    ManagedChannel channel(int port) {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        channels.add(channel);
        return channel;
    }

    FleetServiceGrpc.FleetServiceBlockingStub blocking() {
        return FleetServiceGrpc.newBlockingStub(channel());
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
