package dev.rollcall.core.protocols;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A plain grpc-java server on loopback serving the given services: what a worker of another engine
 * is. Its port is free again when {@link #close()} returns (see there).
 */
final class HealthServer implements AutoCloseable {
    private final Server server;
    private final EventLoopGroup eventLoops;

    private HealthServer(Server server, EventLoopGroup eventLoops) {
        this.server = server;
        this.eventLoops = eventLoops;
    }

    /** Serves {@code services} on {@code port} of 127.0.0.1 (0: any free one). */
    static HealthServer start(int port, BindableService... services) throws IOException {
        return start(port, null, services);
    }

    /**
     * As {@link #start(int, BindableService...)}, with {@code transports} (null: none) told of every
     * connection. Everything else is grpc-java's default, keepalive enforcement included: pings
     * permitted every 5 minutes, a {@code too_many_pings} GOAWAY after the third that comes sooner.
     */
    static HealthServer start(int port, ServerTransportFilter transports, BindableService... services) throws IOException {
        // Event loops of its own, which close() ends: see there.
        EventLoopGroup eventLoops = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))
                .channelType(NioServerSocketChannel.class)
                .bossEventLoopGroup(eventLoops)
                .workerEventLoopGroup(eventLoops);
        if (transports != null) {
            b.addTransportFilter(transports);
        }
        for (BindableService s : services) {
            b.addService(s);
        }
        try {
            return new HealthServer(b.build().start(), eventLoops);
        } catch (IOException | RuntimeException e) {
            eventLoops.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e;
        }
    }

    /**
     * As {@link #start} on a free port below the kernel's ephemeral range (from 32768 by default on
     * Linux), for a test that restarts a server on its port: an ephemeral port may be handed to an
     * outgoing connection (the resolver reconnecting to it, even connecting to itself) in the moment
     * between the close and the successor's bind, which then fails "Failed to bind". The testkit's
     * ports do the same; core's tests cannot use the testkit. (The "Failed to bind" CI saw twice was
     * mostly the other cause, which {@link #close()} now waits out: the old socket still listening.)
     */
    static HealthServer startBelowEphemeral(BindableService... services) throws IOException {
        IOException last = null;
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(20_000, 32_000);
            try {
                return start(port, services);
            } catch (IOException inUse) {
                last = inUse;
            }
        }
        throw last;
    }

    int port() {
        return server.getPort();
    }

    /**
     * Stops at once (open connections are cut) and returns once the port is free. A closed NIO
     * server socket keeps its port until its selector runs once more (JDK 11+, netty#8697), which
     * may be after {@code awaitTermination} returns: 1,121 of 3,000 binds right after it failed
     * here with gRPC's shared event loops. Ending the server's own loops closes the selector.
     */
    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
        eventLoops.shutdownGracefully(0, 0, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
}
