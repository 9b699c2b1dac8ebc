package dev.rollcall.core.protocols;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/** A plain grpc-java server on loopback serving the given services: what a worker of another engine is. */
final class HealthServer implements AutoCloseable {
    private final Server server;

    private HealthServer(Server server) {
        this.server = server;
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
        NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        if (transports != null) {
            b.addTransportFilter(transports);
        }
        for (BindableService s : services) {
            b.addService(s);
        }
        return new HealthServer(b.build().start());
    }

    /**
     * As {@link #start} on a free port below the kernel's ephemeral range (from 32768 by default on
     * Linux), for a test that restarts a server on its port: an ephemeral port may be handed to an
     * outgoing connection (the resolver reconnecting to it, even connecting to itself) in the moment
     * between the close and the successor's bind, which then fails "Failed to bind". The testkit's
     * ports do the same; core's tests cannot use the testkit.
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

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }
}
