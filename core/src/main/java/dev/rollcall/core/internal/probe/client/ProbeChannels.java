package dev.rollcall.core.internal.probe.client;

import com.google.common.net.InetAddresses;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.internal.ProbeTls;
import io.grpc.ManagedChannel;
import io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * How {@link ProbeClient} builds a channel to one worker: Netty, TLS for {@code grpcs://} endpoints
 * (plaintext for {@code grpc://}), IP literals without name resolution, callbacks directly on the
 * event loop, no idle mode, no message bound of the channel's own, and HTTP/2 keepalive only when
 * asked. Stateless; any thread.
 */
final class ProbeChannels {

    /** Idle timeouts above 30 days switch gRPC's idle mode off: a kept channel must not go idle on its own. */
    private static final long NO_IDLE_TIMEOUT_DAYS = 31;

    private ProbeChannels() {
    }

    /**
     * A channel to {@code endpoint}, connecting lazily: on {@code loop} (null: gRPC's shared event
     * loop), with {@code tls} for {@code grpcs://}, and {@code keepalive} (null: none); its sockets
     * are counted in {@code sockets} (null: not counted; only on a {@code loop} of Rollcall's own).
     */
    static ManagedChannel build(WorkerEndpoint endpoint, ProbeTls tls, EventLoopGroup loop,
                                ProbeClient.Http2Keepalive keepalive, OpenSockets sockets) {
        NettyChannelBuilder builder;
        if (endpoint.tls()) {
            builder = InetAddresses.isInetAddress(endpoint.host())
                    ? NettyChannelBuilder.forAddress(new InetSocketAddress(
                            InetAddresses.forString(endpoint.host()), endpoint.port()), tls.credentials())
                    : NettyChannelBuilder.forAddress(endpoint.host(), endpoint.port(), tls.credentials());
        } else {
            builder = InetAddresses.isInetAddress(endpoint.host())
                    ? NettyChannelBuilder.forAddress(
                            new InetSocketAddress(InetAddresses.forString(endpoint.host()), endpoint.port()))
                    : NettyChannelBuilder.forAddress(endpoint.host(), endpoint.port());
            builder.usePlaintext();
        }
        if (loop != null && sockets != null) {
            builder.eventLoopGroup(loop).channelFactory(sockets.counting(NioSocketChannel::new), InetSocketAddress.class);
        } else if (loop != null) {
            builder.eventLoopGroup(loop).channelType(NioSocketChannel.class, InetSocketAddress.class);
        }
        // Census stats and tracing are on by default: every build then looks io.grpc.census up with
        // Class.forName and, without grpc-census on the class path, pays for two
        // ClassNotFoundExceptions (a scan of every jar) per channel, on every probe of a closed
        // channel. RollcallMetrics measures probes instead.
        InternalNettyChannelBuilder.setStatsEnabled(builder, false);
        InternalNettyChannelBuilder.setTracingEnabled(builder, false);
        // No message bound of the channel's own: the probe and watch calls bound their answers per
        // call (maxResponseBytes), and the channel is also the user's (WorkerResolver.channel) for
        // Arrow Flight, whose own client takes messages of any size (FlightClient: Integer.MAX_VALUE).
        builder.directExecutor()
                .idleTimeout(NO_IDLE_TIMEOUT_DAYS, TimeUnit.DAYS)
                .maxInboundMessageSize(Integer.MAX_VALUE)
                .maxInboundMetadataSize(64 * 1024)
                .disableRetry()
                .userAgent("rollcall");
        if (endpoint.tls() && tls.authority() != null) {
            builder.overrideAuthority(tls.authority());
        }
        if (keepalive != null) {
            // Without calls too: a worker that serves only the unary call has no stream to hear from.
            builder.keepAliveTime(keepalive.time().toNanos(), TimeUnit.NANOSECONDS)
                    .keepAliveTimeout(keepalive.timeout().toNanos(), TimeUnit.NANOSECONDS)
                    .keepAliveWithoutCalls(true);
        }
        return builder.build();
    }
}
