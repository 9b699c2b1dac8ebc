package dev.rollcall.it.faults;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Attributes;
import io.grpc.Server;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A worker whose {@code WorkerInfo} answer the test scripts: what it says, how late, or never. A real
 * gRPC server on loopback, not a Rollcall worker, so that it can misbehave in ways a
 * {@code RollcallWorker} never would. It counts the probes it receives and the connections open to
 * it (a {@link ServerTransportFilter}), and can go down. (It does not come back on its port: that
 * port is an ephemeral one, and a closed NIO server socket keeps its port until its event loop
 * selects once more; a restart in place is rollcall-local's {@code WorkerFleet}'s, which handles both.)
 */
final class ScriptedWorker implements AutoCloseable {

    /** How to answer one probe: call {@code out} now, later, or never. Runs on the server's thread. */
    interface Script {
        void answer(StreamObserver<WorkerInfoResponse> out, ScheduledExecutorService later);
    }

    private static final AtomicInteger COUNT = new AtomicInteger();

    private final Script script;
    private final ScheduledExecutorService later;
    private final AtomicLong probes = new AtomicLong();
    private final AtomicInteger openConnections = new AtomicInteger();
    private final int port;
    private Server server;
    private AtomicLong delayedAnswers = new AtomicLong();

    private ScriptedWorker(int port, Script script) {
        this.script = script;
        int n = COUNT.incrementAndGet();
        this.later = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "test-scripted-worker-" + n);
            t.setDaemon(true);
            return t;
        });
        this.server = serve(port);
        this.port = server.getPort();
    }

    /** Serves {@code script} on a free loopback port. */
    static ScriptedWorker start(Script script) {
        return new ScriptedWorker(0, script);
    }

    /** Answers {@code response} at once. */
    static ScriptedWorker answering(WorkerInfoResponse response) {
        return start((out, later) -> {
            out.onNext(response);
            out.onCompleted();
        });
    }

    /** Answers {@code version} after {@code delayMillis}. */
    static ScriptedWorker answeringAfter(long delayMillis, String version) {
        AtomicLong sent = new AtomicLong();
        ScriptedWorker w = start((out, later) -> later.schedule(() -> {
            try {
                out.onNext(WorkerInfoResponse.newBuilder().setVersion(version).setInstanceId("late").build());
                out.onCompleted();
            } catch (RuntimeException cancelled) {
                // The caller gave up (its deadline passed): the answer goes nowhere.
            } finally {
                sent.incrementAndGet();
            }
        }, delayMillis, TimeUnit.MILLISECONDS));
        w.delayedAnswers = sent;
        return w;
    }

    static WorkerInfoResponse version(String version) {
        return WorkerInfoResponse.newBuilder().setVersion(version).setInstanceId("scripted").build();
    }

    private Server serve(int onPort) {
        try {
            return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", onPort))
                    .addService(new WorkerServiceGrpc.WorkerServiceImplBase() {
                        @Override
                        public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
                            probes.incrementAndGet();
                            script.answer(out, later);
                        }
                    })
                    .addTransportFilter(new ServerTransportFilter() {
                        @Override
                        public Attributes transportReady(Attributes attributes) {
                            openConnections.incrementAndGet();
                            return attributes;
                        }

                        @Override
                        public void transportTerminated(Attributes attributes) {
                            openConnections.decrementAndGet();
                        }
                    })
                    .maxInboundMessageSize(1 << 20)
                    .build()
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve on 127.0.0.1:" + onPort, e);
        }
    }

    WorkerEndpoint endpoint() {
        return WorkerEndpoint.of("127.0.0.1", port);
    }

    /** Probes received, across restarts. */
    long probes() {
        return probes.get();
    }

    /** Answers sent (or attempted, when the call was already cancelled) after a delay. */
    long delayedAnswers() {
        return delayedAnswers.get();
    }

    /** Connections open to this worker right now. */
    int openConnections() {
        return openConnections.get();
    }

    synchronized boolean isUp() {
        return server != null;
    }

    /** Goes down at once: the port refuses connections and open ones are cut. */
    synchronized void stop() {
        if (server != null) {
            server.shutdownNow();
            try {
                server.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            server = null;
        }
    }

    @Override
    public void close() {
        stop();
        later.shutdownNow();
    }

    @Override
    public String toString() {
        return "ScriptedWorker[" + endpoint().url() + "]";
    }
}
