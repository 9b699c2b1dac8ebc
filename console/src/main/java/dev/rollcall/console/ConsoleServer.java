package dev.rollcall.console;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The console's HTTP/1.1 server, on Netty (gRPC's transport, already on the class path): reads are
 * non-blocking, so a connection that sends a byte and stalls holds no thread, only its slot among
 * {@link #maxConnections(int)}. Each connection has a deadline for its request head (the
 * {@code request-timeout}), limits on the request line and header size, and a deadline for what it
 * is sent: a connection that takes none of it for the {@code write-timeout} is closed; all its limits are this server's own, none is a JVM-wide
 * property. Threads: {@code rollcall-console-<name>-http-1} and {@code -2}, daemon, ended by
 * {@link #close()}. Thread-safe.
 */
final class ConsoleServer implements AutoCloseable {

    /** The request line: a path of the console's is short; anything longer is {@code 414}. */
    static final int MAX_REQUEST_LINE = 4096;
    /** All header lines together: a browser's are a few hundred bytes; more is {@code 431}. */
    static final int MAX_HEADER_BYTES = 8192;
    /** Connections beyond the event streams' own: the page's requests and those that stall. */
    static final int SPARE_CONNECTIONS = 64;

    private static final AttributeKey<Boolean> OVER_LIMIT = AttributeKey.valueOf(ConsoleServer.class, "overLimit");

    private final EventLoopGroup group;
    private final Channel listening;
    private final AtomicInteger connections = new AtomicInteger();

    /**
     * Binds {@code address} and serves; each connection gets a handler from {@code handlers}.
     *
     * @throws IOException when the address cannot be bound
     */
    ConsoleServer(String name, InetSocketAddress address, int maxClients, Duration writeTimeout,
                  Supplier<ConsoleHandler> handlers) throws IOException {
        int max = maxConnections(maxClients);
        AtomicInteger threads = new AtomicInteger();
        group = new MultiThreadIoEventLoopGroup(2, r -> {
            Thread t = new FastThreadLocalThread(r, "rollcall-console-" + name + "-http-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        }, NioIoHandler.newFactory());
        HttpDecoderConfig decoding = new HttpDecoderConfig().setMaxInitialLineLength(MAX_REQUEST_LINE)
                .setMaxHeaderSize(MAX_HEADER_BYTES).setMaxChunkSize(MAX_HEADER_BYTES);
        long writeMillis = Math.max(1, writeTimeout.toMillis());
        ServerBootstrap bootstrap = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 128)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInboundHandlerAdapter() {
                    // Counted here, on the acceptor, in the order connections were accepted.
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        Channel child = (Channel) msg;
                        int open = connections.incrementAndGet();
                        if (open > 2 * max) {
                            connections.decrementAndGet();
                            child.unsafe().closeForcibly(); // far beyond the limit: not even a 503 to read
                            return;
                        }
                        child.closeFuture().addListener(f -> connections.decrementAndGet());
                        child.attr(OVER_LIMIT).set(open > max);
                        ctx.fireChannelRead(child);
                    }
                })
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ConsoleHandler handler = handlers.get();
                        if (Boolean.TRUE.equals(ch.attr(OVER_LIMIT).get())) {
                            handler.turnAway(max);
                        }
                        ch.pipeline().addLast("http", new HttpServerCodec(decoding))
                                // Progress counts: a browser reading a large document slowly is not stalled.
                                .addLast("write-timeout", new IdleStateHandler(true, 0, writeMillis, 0,
                                        TimeUnit.MILLISECONDS))
                                .addLast("console", handler);
                    }
                });
        try {
            listening = bootstrap.bind(address).syncUninterruptibly().channel();
        } catch (Exception e) { // Netty rethrows the bind's IOException without declaring it
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e instanceof IOException io ? io : new IOException(e.getMessage(), e);
        }
    }

    /** The most connections open at once for {@code maxClients} event streams; beyond it, {@code 503}. */
    static int maxConnections(int maxClients) {
        return maxClients + SPARE_CONNECTIONS;
    }

    /** The bound address (with the port chosen when 0 was asked for). */
    InetSocketAddress address() {
        return (InetSocketAddress) listening.localAddress();
    }

    /** Connections open now. */
    int connections() {
        return connections.get();
    }

    /** Closes the listening socket and every connection, and ends the threads. */
    @Override
    public void close() {
        listening.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
