package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.worker.WorkerInfoService;
import io.grpc.Attributes;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Many lightweight real workers in one JVM: each is its own gRPC server on its own loopback port,
 * serving only {@code rollcall.v1.WorkerService} ({@link WorkerInfoService}, its own instance id),
 * all sharing one boss and one worker event loop group and answering on the event loop
 * ({@code directExecutor}). A {@code RollcallWorker} would add Arrow Flight and a thread pool per
 * worker, which 10,000 of them cannot afford on two cores; the wire answer is the same.
 *
 * <p>Thread-safe; {@link #close()} stops every server and the event loops.
 */
final class LoopbackServers implements AutoCloseable {

    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final List<Server> servers = new ArrayList<>();
    private final List<WorkerEndpoint> endpoints = new ArrayList<>();
    private final AtomicLong probesAnswered = new AtomicLong();
    private static final Attributes.Key<Boolean> COUNTED = Attributes.Key.create("rollcall-bench-counted");
    /** Connections open to any of the servers now, as their transports count them. */
    private final AtomicInteger connections = new AtomicInteger();
    /** Connections the servers have accepted since they started, closed ones included. */
    private final AtomicLong accepted = new AtomicLong();
    /** With Arrow Flight: its allocator, producer and the executor its calls run on; otherwise null. */
    private FlightParts flight;

    private LoopbackServers(int loopThreads) {
        this.boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("rollcall-bench-accept", true),
                NioIoHandler.newFactory());
        this.workers = new MultiThreadIoEventLoopGroup(loopThreads,
                new DefaultThreadFactory("rollcall-bench-serve", true), NioIoHandler.newFactory());
    }

    /**
     * Starts {@code count} servers reporting {@code version} on the first free ports from
     * {@code firstPort} to {@code lastPort} (ports that are taken are skipped), or on ephemeral ports
     * when {@code firstPort} is 0.
     *
     * @throws IllegalStateException when the range has fewer than {@code count} free ports
     */
    static LoopbackServers start(int count, int firstPort, int lastPort, String version) {
        return start(count, firstPort, lastPort, version, false);
    }

    /**
     * Like {@link #start(int, int, int, String)}; with {@code flight}, each server also serves Arrow
     * Flight, whose {@code DoGet} answers ten rows (on a shared executor, not the event loop).
     */
    static LoopbackServers start(int count, int firstPort, int lastPort, String version, boolean flight) {
        LoopbackServers s = new LoopbackServers(Math.min(2, Runtime.getRuntime().availableProcessors()));
        if (flight) {
            s.flight = new FlightParts();
        }
        try {
            int port = firstPort;
            while (s.servers.size() < count) {
                if (firstPort != 0 && port > lastPort) {
                    throw new IllegalStateException("only " + s.servers.size() + " of " + count
                            + " ports free in " + firstPort + ".." + lastPort);
                }
                s.tryStart(firstPort == 0 ? 0 : port++, version);
            }
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    private void tryStart(int port, String version) {
        InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
        NettyServerBuilder builder = NettyServerBuilder.forAddress(address)
                .bossEventLoopGroup(boss)
                .workerEventLoopGroup(workers)
                .channelType(NioServerSocketChannel.class)
                .addService(ServerInterceptors.intercept(WorkerInfoService.builder().version(version).build(),
                        new Counter()))
                .addTransportFilter(new ServerTransportFilter() {
                    @Override
                    public Attributes transportReady(Attributes attributes) {
                        connections.incrementAndGet();
                        accepted.incrementAndGet();
                        return attributes.toBuilder().set(COUNTED, Boolean.TRUE).build();
                    }

                    @Override
                    public void transportTerminated(Attributes attributes) {
                        // grpc-java passes null for a transport that never got ready: it was not counted
                        if (attributes != null && attributes.get(COUNTED) != null) {
                            connections.decrementAndGet();
                        }
                    }
                });
        if (flight == null) {
            builder.directExecutor();
        } else {
            builder.executor(flight.executor).addService(org.apache.arrow.flight.FlightGrpcUtils.createFlightService(
                    flight.allocator, flight.producer, null, flight.executor));
        }
        Server server = builder.build();
        try {
            server.start();
        } catch (IOException taken) {
            server.shutdownNow();
            return;
        }
        servers.add(server);
        endpoints.add(WorkerEndpoint.of("127.0.0.1", ((InetSocketAddress) server.getListenSockets().get(0)).getPort()));
    }

    /** Where the servers listen, in start order. */
    List<WorkerEndpoint> endpoints() {
        return List.copyOf(endpoints);
    }

    /** Connections open to the servers now (all of them together), as the servers count them. */
    int openConnections() {
        return connections.get();
    }

    /** Connections the servers accepted so far (all of them together, closed ones included). */
    long acceptedConnections() {
        return accepted.get();
    }

    /** {@code WorkerInfo} calls answered so far, by all servers. */
    long probesAnswered() {
        return probesAnswered.get();
    }

    @Override
    public void close() {
        servers.forEach(Server::shutdownNow);
        for (Server s : servers) {
            try {
                s.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        if (flight != null) {
            flight.executor.shutdownNow();
            flight.allocator.close();
        }
    }

    /** What the servers' Flight services share. */
    private static final class FlightParts {
        final org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator();
        final java.util.concurrent.ExecutorService executor = java.util.concurrent.Executors.newFixedThreadPool(4,
                new DefaultThreadFactory("rollcall-bench-flight", true));
        final TenRows producer = new TenRows(allocator, 0);
    }

    private final class Counter implements ServerInterceptor {
        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                           ServerCallHandler<Q, A> next) {
            probesAnswered.incrementAndGet();
            return next.startCall(call, headers);
        }
    }
}
