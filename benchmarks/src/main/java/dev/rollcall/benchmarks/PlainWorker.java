package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.worker.WorkerInfoService;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A worker as small as a real one gets for scenario 8: {@code rollcall.v1.WorkerService}
 * ({@link WorkerInfoService}, its own instance id) and gRPC health, whose {@code Check} is the
 * "user call" the scenario sends and counts here, on the worker's side. It listens with
 * {@code SO_REUSEPORT} (epoll, Linux), so a successor can listen on the same port before the old
 * process dies, as a hot restart in place does. {@link #kill()} stops it at once: connections
 * reset, calls in flight fail. Thread-safe.
 */
final class PlainWorker implements AutoCloseable {

    /** Shared by the plain workers of this JVM and never shut down (daemon threads). */
    private static final EventLoopGroup EVENT_LOOP = new MultiThreadIoEventLoopGroup(2,
            new DefaultThreadFactory("rollcall-bench-plain-worker", true), EpollIoHandler.newFactory());

    private final AtomicLong calls;
    private final String version;
    private final Server server;
    private final int port;

    private PlainWorker(String version, Server server, AtomicLong calls) {
        this.version = version;
        this.server = server;
        this.calls = calls;
        this.port = ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
    }

    /**
     * Starts a worker reporting {@code version} on loopback {@code port} (0: an ephemeral one),
     * beside whatever else listens there with {@code SO_REUSEPORT}.
     */
    static PlainWorker start(int port, String version) throws IOException {
        AtomicLong calls = new AtomicLong();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                .channelType(EpollServerSocketChannel.class)
                .bossEventLoopGroup(EVENT_LOOP).workerEventLoopGroup(EVENT_LOOP)
                .withOption(EpollChannelOption.SO_REUSEPORT, true)
                .directExecutor()
                .addService(WorkerInfoService.builder().version(version).build())
                .addService(new HealthStatusManager().getHealthService())
                .intercept(new Counter(calls))
                .build()
                .start();
        return new PlainWorker(version, server, calls);
    }

    /** Health checks (user calls) this instance has received; probes are not counted. */
    long calls() {
        return calls.get();
    }

    String version() {
        return version;
    }

    int port() {
        return port;
    }

    WorkerEndpoint endpoint() {
        return WorkerEndpoint.of("127.0.0.1", port);
    }

    /** Gone at once ({@code shutdownNow}): connections reset, calls in flight fail. */
    void kill() {
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        kill();
    }

    /** Counts the health checks it serves. */
    private record Counter(AtomicLong calls) implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                          ServerCallHandler<Q, R> next) {
            if (call.getMethodDescriptor().getServiceName().equals("grpc.health.v1.Health")) {
                calls.incrementAndGet();
            }
            return next.startCall(call, headers);
        }
    }
}
