package dev.rollcall.worker;

import dev.rollcall.api.internal.NamedThreads;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's one gRPC server: bound to its address, on event loops of its own
 * ({@code rollcall-worker-N-io-M}, started on first use), plaintext or TLS, with the limits of
 * {@link WorkerLimits}. It owns the executor its calls run on and, when Rollcall made it, Flight's
 * allocator. {@link #stop()} returns once the port can be bound again. Not thread-safe:
 * {@link RollcallWorker} starts and stops it once.
 */
final class WorkerServer {

    private static final Logger log = LoggerFactory.getLogger(WorkerServer.class);
    /** How long a stop after an exact drain that ended waits for its connections to close (see {@link #stop}). */
    private static final long EXACT_END_GRACE_MILLIS = 100;

    private final Server server;
    private final EventLoopGroup eventLoops;
    private final String address;
    private final ExecutorService executor;
    private final BufferAllocator ownAllocator;

    private WorkerServer(Server server, EventLoopGroup eventLoops, String address, ExecutorService executor,
                         BufferAllocator ownAllocator) {
        this.server = server;
        this.eventLoops = eventLoops;
        this.address = address;
        this.executor = executor;
        this.ownAllocator = ownAllocator;
    }

    /**
     * Binds {@code host:port} and serves {@code services} (the first interceptor innermost, as
     * {@link NettyServerBuilder#intercept} does), their calls run on {@code executor};
     * {@code ownAllocator} (or null) is closed by {@link #stop()}.
     *
     * @throws IOException when the address cannot be bound; the event loops, the executor and the
     *         allocator are released again
     */
    static WorkerServer start(String name, String host, int port, WorkerTls tls, WorkerLimits limits,
                              ExecutorService executor, BufferAllocator ownAllocator,
                              List<ServerServiceDefinition> services, List<ServerInterceptor> interceptors)
            throws IOException {
        // Event loops of its own, so that stop() can wait until the listening socket is really
        // released: see releasePort.
        EventLoopGroup eventLoops = new MultiThreadIoEventLoopGroup(0, NamedThreads.daemon(name + "-io"),
                NioIoHandler.newFactory());
        InetSocketAddress address = new InetSocketAddress(host, port);
        NettyServerBuilder sb = (tls == null ? NettyServerBuilder.forAddress(address)
                : NettyServerBuilder.forAddress(address, tls.credentials()))
                .channelType(NioServerSocketChannel.class)
                .bossEventLoopGroup(eventLoops)
                .workerEventLoopGroup(eventLoops)
                // Bind beside the TIME-WAIT connections a stopped process on this port left
                // (already the JDK's default for NIO on Linux; explicit, should the transport change).
                .withOption(ChannelOption.SO_REUSEADDR, true)
                .executor(executor);
        limits.applyTo(sb);
        services.forEach(sb::addService);
        interceptors.forEach(sb::intercept);
        Server server = sb.build();
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            releasePort(eventLoops, host + ":" + port);
            release(executor, ownAllocator);
            throw new IOException("cannot start worker on " + host + ":" + port + ": " + e.getMessage(), e);
        }
        return new WorkerServer(server, eventLoops, host + ":" + port, executor, ownAllocator);
    }

    /** The port bound (useful with port 0). */
    int port() {
        return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
    }

    void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    /**
     * Stops taking calls, gives the running ones a second, cancels what is left, releases the
     * port, the executor and the allocator it owns. With {@code nothingRuns} (an exact drain that
     * ended: every holder let go and no call in flight) the grace is {@value #EXACT_END_GRACE_MILLIS}
     * ms: a graceful stop also waits for every connected peer to answer gRPC's shutdown ping, and a
     * silent one (a host cut off, a long GC pause) held it the whole second; what the stop itself
     * queued (the watches' last answers, a release's answer) is written long before, and nothing
     * else should arrive. Keeps the thread's interrupt.
     */
    void stop(boolean nothingRuns) {
        server.shutdown();
        try {
            if (!server.awaitTermination(nothingRuns ? EXACT_END_GRACE_MILLIS : 1_000, TimeUnit.MILLISECONDS)) {
                server.shutdownNow();
                server.awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
        releasePort(eventLoops, address);
        release(executor, ownAllocator);
    }

    private static void release(ExecutorService executor, BufferAllocator ownAllocator) {
        executor.shutdownNow();
        if (ownAllocator != null) {
            ownAllocator.close();
        }
    }

    /**
     * Ends the server's own event loops, and with them its listening socket. A closed NIO server
     * socket keeps its port until its selector runs once more (JDK 11+, netty#8697): with gRPC's
     * shared event loops, 2 to 10 of 300 restarts in place right after close() failed to bind.
     */
    private static void releasePort(EventLoopGroup eventLoops, String address) {
        if (!eventLoops.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS)) {
            log.warn("worker {}: its event loops did not end within 10 s; the port may stay taken a while", address);
        }
    }
}
