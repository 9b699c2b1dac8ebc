package dev.rollcall.local;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.arrow.flight.FlightProducer;

/**
 * One real worker of a {@link WorkerFleet}: a {@link RollcallWorker} on a loopback port that counts
 * the probes it answers ({@code WorkerInfo} calls and {@code WatchWorkerInfo} streams), and can be stopped and restarted in place (same port,
 * new instance id, possibly a new version).
 *
 * <p>Thread-safe: every method may be called from any thread.
 */
public final class FleetWorker {

    private final Function<String, FlightProducer> producers;
    private final AtomicLong probes = new AtomicLong();
    private final WorkerEndpoint endpoint;
    private RollcallWorker running;
    private String version;

    FleetWorker(String version, int port, Function<String, FlightProducer> producers) {
        this.producers = producers;
        this.version = version;
        this.running = startOn(port, version);
        this.endpoint = running.endpoint();
    }

    /** Where the worker listens; stays the same across restarts. */
    public WorkerEndpoint endpoint() {
        return endpoint;
    }

    /** The version it reports now (or reported last, when stopped). */
    public synchronized String version() {
        return version;
    }

    /** The instance id of the running process, or {@code null} when stopped. */
    public synchronized String instanceId() {
        return running == null ? null : running.instanceId();
    }

    /** Whether the worker is serving. */
    public synchronized boolean isRunning() {
        return running != null;
    }

    /**
     * How many probes it has answered, across restarts: {@code WorkerInfo} calls and
     * {@code WatchWorkerInfo} streams opened (a resolver with kept channels probes with the stream).
     */
    public long probeCount() {
        return probes.get();
    }

    /** Stops serving (connections are closed); the port is free until {@link #restart}. Idempotent. */
    public synchronized void stop() {
        if (running != null) {
            running.close();
            running = null;
        }
    }

    /** Says {@code DRAINING} to the coordinators watching it: it keeps serving, but gets no new work. */
    public synchronized void drain() {
        if (running != null) {
            running.drain();
        }
    }

    /** Takes new work again after {@link #drain()}. */
    public synchronized void resume() {
        if (running != null) {
            running.resume();
        }
    }

    /** Restarts in place: stops if running, then serves {@code newVersion} on the same port with a new instance id. */
    public synchronized void restart(String newVersion) {
        stop();
        running = startOn(endpoint.port(), newVersion);
        version = newVersion;
    }

    private RollcallWorker startOn(int port, String v) {
        ServerInterceptor counter = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                                ServerCallHandler<Q, R> next) {
                String method = call.getMethodDescriptor().getFullMethodName();
                // A probe is either call: a resolver with kept channels probes by opening the stream.
                if (method.equals(WorkerServiceGrpc.getWorkerInfoMethod().getFullMethodName())
                        || method.equals(WorkerServiceGrpc.getWatchWorkerInfoMethod().getFullMethodName())) {
                    probes.incrementAndGet();
                }
                return next.startCall(call, headers);
            }
        };
        try {
            return RollcallWorker.builder()
                    .host("127.0.0.1")
                    .port(port)
                    .version(v)
                    .flightProducer(producers.apply(v))
                    .intercept(counter)
                    .shutdownGrace(Duration.ofMillis(200))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start a test worker on 127.0.0.1:" + port, e);
        }
    }

    @Override
    public synchronized String toString() {
        return endpoint.url() + " version='" + version + "'" + (running == null ? " (stopped)" : "");
    }
}
