package dev.rollcall.local;

import dev.rollcall.api.WorkerEndpoint;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.flight.NoOpFlightProducer;

/**
 * A fleet of real workers on loopback, for {@code rollcall demo}, Rollcall's tests and yours: each
 * is a real gRPC server serving {@code WorkerInfo} and Arrow Flight on its own port.
 *
 * <pre>{@code
 * try (WorkerFleet fleet = WorkerFleet.start("1.4.0", "1.4.0", "2.0.0")) {
 *     fleet.worker(2).restart("1.4.0");          // a rolling upgrade, one worker at a time
 *     List<WorkerEndpoint> candidates = fleet.endpoints();
 * }
 * }</pre>
 *
 * <p>Thread-safe. {@link #close()} stops every worker it started.
 */
public final class WorkerFleet implements AutoCloseable {

    private final List<FleetWorker> workers = new CopyOnWriteArrayList<>();
    private final List<UnresponsiveWorker> unresponsive = new CopyOnWriteArrayList<>();
    private final Function<String, FlightProducer> producers;

    private WorkerFleet(Function<String, FlightProducer> producers) {
        this.producers = producers;
    }

    /** Starts one worker per version, each serving a Flight producer that implements nothing. */
    public static WorkerFleet start(String... versions) {
        return withFlightProducers(v -> new NoOpFlightProducer()).add(versions);
    }

    /** An empty fleet whose workers serve {@code producers.apply(version)} over Flight. */
    public static WorkerFleet withFlightProducers(Function<String, FlightProducer> producers) {
        return new WorkerFleet(Objects.requireNonNull(producers, "producers"));
    }

    /** Starts one more worker per version; returns this fleet. */
    public WorkerFleet add(String... versions) {
        for (String v : versions) {
            addWorker(v);
        }
        return this;
    }

    /** Starts one more worker and returns it. */
    public FleetWorker addWorker(String version) {
        // A port below the ephemeral range (see LoopbackPorts), so that a restart in place can
        // always bind it again; another process may take a free port first: try a few.
        RuntimeException last = null;
        for (int attempt = 0; attempt < 10; attempt++) {
            try {
                FleetWorker w = new FleetWorker(version, LoopbackPorts.free(), producers);
                workers.add(w);
                return w;
            } catch (UncheckedIOException e) {
                last = e;
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }
        close();
        throw last;
    }

    /** Starts a worker that accepts connections and never answers. */
    public UnresponsiveWorker addUnresponsive() {
        UnresponsiveWorker u = UnresponsiveWorker.start();
        unresponsive.add(u);
        return u;
    }

    /** The i-th worker started (0-based), unresponsive ones not counted. */
    public FleetWorker worker(int i) {
        return workers.get(i);
    }

    /** Every worker started, in order. */
    public List<FleetWorker> workers() {
        return List.copyOf(workers);
    }

    /**
     * The endpoints of every worker (stopped ones too, until {@link #retire}d) and every unresponsive
     * one, in the order they were started.
     */
    public List<WorkerEndpoint> endpoints() {
        List<WorkerEndpoint> all = new ArrayList<>();
        workers.forEach(w -> all.add(w.endpoint()));
        unresponsive.forEach(u -> all.add(u.endpoint()));
        return List.copyOf(all);
    }

    /** Endpoints as {@code grpc://127.0.0.1:port}, comma-separated: a value for {@code rollcall.discovery.static.endpoints}. */
    public String endpointList() {
        return String.join(",", endpoints().stream().map(WorkerEndpoint::url).toList());
    }

    /**
     * A loopback endpoint whose port is free right now, with nothing listening: an unreachable
     * worker. {@link #workerOn} can start one there later.
     */
    public static WorkerEndpoint freeEndpoint() {
        return WorkerEndpoint.of("127.0.0.1", LoopbackPorts.free());
    }

    /** Starts a worker on a given port (e.g. one from {@link #freeEndpoint()}). */
    public FleetWorker workerOn(WorkerEndpoint endpoint, String version) {
        FleetWorker w = new FleetWorker(version, endpoint.port(), producers);
        workers.add(w);
        return w;
    }

    /** Stops {@code worker} and forgets it: it is no longer in {@link #workers()} or {@link #endpoints()}. */
    public void retire(FleetWorker worker) {
        worker.stop();
        workers.remove(worker);
    }

    /** Stops every worker. Idempotent. */
    @Override
    public void close() {
        workers.forEach(FleetWorker::stop);
        unresponsive.forEach(UnresponsiveWorker::close);
    }

    @Override
    public String toString() {
        return "WorkerFleet" + Arrays.toString(workers.toArray());
    }
}
