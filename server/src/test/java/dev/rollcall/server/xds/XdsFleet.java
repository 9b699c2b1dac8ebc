package dev.rollcall.server.xds;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.server.FleetServer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An xDS test's fleet: real workers on loopback, each counting the calls an xDS client made to it
 * (those that carry {@link GrpcXdsClient#CALLER}, so the resolver's own probes do not count), a
 * discovery the test changes, a resolver that accepts 1.x and rejects every other version, and a
 * {@link FleetServer} over it (gRPC only) that the test can stop and start again on the same port.
 * Closes all of it.
 */
final class XdsFleet implements AutoCloseable {

    static final Duration WAIT = Duration.ofSeconds(30);

    final PushDiscovery discovery = new PushDiscovery("xds-fleet");
    final WorkerResolver resolver;
    private final List<Worker> workers = new ArrayList<>();
    private final RollcallConfig serve;
    private final int port;
    private FleetServer server;

    /** A worker and the xDS clients' calls it has served. */
    record Worker(RollcallWorker worker, AtomicLong calls) {
        long served() {
            return calls.get();
        }

        String instanceId() {
            return worker.instanceId();
        }

        WorkerEndpoint endpoint() {
            return worker.endpoint();
        }
    }

    private XdsFleet(Map<String, String> serve) throws IOException {
        this.serve = RollcallConfig.of(serve);
        discovery.push(List.of());
        resolver = WorkerResolver.builder().name("xds").discovery(discovery)
                .policy(w -> w.version().startsWith("1.") ? Verdict.accept()
                        : Verdict.reject("version " + w.version() + " is not 1.x"))
                .fetchSchemas(false).probeTimeout(Duration.ofSeconds(5)).build();
        try {
            server = serve(0);
        } catch (IOException | RuntimeException e) {
            resolver.close();
            throw e;
        }
        port = server.grpcAddress().getPort();
    }

    static XdsFleet start() throws IOException {
        return new XdsFleet(Map.of());
    }

    /** A fleet whose server reads {@code serve} ({@code rollcall.serve.*} keys: TLS, token). */
    static XdsFleet start(Map<String, String> serve) throws IOException {
        return new XdsFleet(serve);
    }

    private FleetServer serve(int onPort) throws IOException {
        return FleetServer.builder(resolver).config(serve).host("127.0.0.1").port(onPort)
                .http(false).start();
    }

    /** The control plane's port (the same across {@link #stopServer()} and {@link #startServer()}). */
    int port() {
        return port;
    }

    /** Stops {@code rollcall serve}: every xDS stream ends, the resolver keeps running. */
    void stopServer() {
        server.close();
    }

    /** Starts a new server (a new instance id) on the same port. */
    void startServer() throws IOException {
        server = serve(port);
    }

    /** Starts a worker of {@code version} on any free port (not yet listed by discovery). */
    Worker worker(String version) throws IOException {
        return worker(version, 0);
    }

    /** Starts a worker of {@code version} on {@code onPort} (0: any free port). */
    Worker worker(String version, int onPort) throws IOException {
        AtomicLong calls = new AtomicLong();
        RollcallWorker w = RollcallWorker.builder().version(version).host("127.0.0.1").port(onPort)
                .drainQuiet(Duration.ofMillis(200)).intercept(countingXdsCalls(calls)).start();
        Worker worker = new Worker(w, calls);
        workers.add(worker);
        return worker;
    }

    /** Makes discovery list exactly {@code listed}, with {@code labels} on each endpoint. */
    void list(Map<String, String> labels, Worker... listed) {
        List<WorkerEndpoint> endpoints = new ArrayList<>();
        for (Worker w : listed) {
            endpoints.add(w.endpoint().withLabels(labels));
        }
        discovery.push(endpoints);
    }

    /** Makes discovery list exactly {@code listed}. */
    void list(Worker... listed) {
        list(Map.of(), listed);
    }

    /** Waits until the resolver's snapshot says {@code state} for each of {@code these}. */
    FleetSnapshot await(WorkerStatus.State state, Worker... these) throws Exception {
        return resolver.await(s -> {
            for (Worker w : these) {
                if (s.status(w.endpoint().url()).filter(st -> st.state() == state
                        && st.info().map(i -> i.instanceId().equals(w.instanceId())).orElse(false)).isEmpty()) {
                    return false;
                }
            }
            return true;
        }, WAIT);
    }

    private static ServerInterceptor countingXdsCalls(AtomicLong calls) {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                              ServerCallHandler<Q, R> next) {
                if (headers.containsKey(GrpcXdsClient.CALLER)) {
                    calls.incrementAndGet();
                }
                return next.startCall(call, headers);
            }
        };
    }

    @Override
    public void close() {
        try {
            server.close();
            resolver.close();
        } finally {
            for (Worker w : workers) {
                w.worker().close();
            }
        }
    }
}
