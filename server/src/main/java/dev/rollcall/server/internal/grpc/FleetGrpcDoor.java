package dev.rollcall.server.internal.grpc;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.api.internal.NamedThreads;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.protocol.internal.RequestBytesLimit;
import dev.rollcall.protocol.internal.StreamLimit;
import dev.rollcall.server.internal.catalog.ServeKeys;
import dev.rollcall.server.internal.xds.XdsDoor;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC port of a {@link dev.rollcall.server.FleetServer}: {@code rollcall.v1.FleetService} with
 * its doors (TLS or mutual TLS, a bearer token, limits on watchers, holds and request size,
 * keepalive), on threads of its own ({@code rollcall-serve-io-N}, {@code rollcall-serve-call-N},
 * daemons). Thread-safe; {@link #close()} is idempotent, ends every stream and lets go of every
 * held snapshot.
 */
public final class FleetGrpcDoor implements AutoCloseable {

    /** Who refuses a stream past a limit, in the refusal's text. */
    private static final String SERVICE = "this service";

    private static final Logger log = LoggerFactory.getLogger(FleetGrpcDoor.class);
    /**
     * Keepalive pings a client may send, with or without calls: half of grpc-java's and grpc-go's
     * 10 s floor, so that a client pinging at that floor is never sent {@code too_many_pings}.
     */
    private static final long PERMIT_KEEPALIVE_SECONDS = 5;
    /** The shortest keepalive time grpc-java lets a server use; it raises a shorter one to this. */
    private static final Duration GRPC_KEEPALIVE_FLOOR = Duration.ofSeconds(10);

    private final Server server;
    private final FleetService service;
    private final XdsDoor xds;
    private final EventLoopGroup eventLoops;
    private final ExecutorService executor;
    private final MeterRegistry extra;
    private final List<Meter> extraMeters;
    private volatile boolean closed;

    private FleetGrpcDoor(Server server, FleetService service, XdsDoor xds, EventLoopGroup eventLoops,
                          ExecutorService executor, MeterRegistry extra, List<Meter> extraMeters) {
        this.server = server;
        this.service = service;
        this.xds = xds;
        this.eventLoops = eventLoops;
        this.executor = executor;
        this.extra = extra;
        this.extraMeters = extraMeters;
    }

    /**
     * Binds {@code rollcall.serve.host}:{@code rollcall.serve.port} and serves.
     *
     * @param meters  where the door's meters go; {@code extra} too when not null
     * @throws dev.rollcall.api.ConfigurationException naming the key and value that are wrong
     * @throws IOException when the port cannot be bound; nothing is left running
     */
    public static FleetGrpcDoor start(WorkerResolver resolver, RollcallConfig config, String instanceId,
                                      MeterRegistry meters, MeterRegistry extra) throws IOException {
        Settings settings = config.settings();
        String host = settings.get(ServeKeys.HOST);
        int port = settings.get(ServeKeys.PORT);
        ServerCredentials tls = ServeTls.read(settings);
        BearerToken token = BearerToken.read(settings);
        int maxRequestBytes = settings.get(ServeKeys.MAX_REQUEST_BYTES);
        Duration keepaliveTime = settings.get(ServeKeys.KEEPALIVE_TIME);
        Duration keepaliveTimeout = settings.get(ServeKeys.KEEPALIVE_TIMEOUT);
        if (keepaliveTime.compareTo(GRPC_KEEPALIVE_FLOOR) < 0) {
            log.warn("{}={} is shorter than gRPC lets a server ping; {} applies", ServeKeys.KEEPALIVE_TIME.name(),
                    keepaliveTime, GRPC_KEEPALIVE_FLOOR);
        }
        StreamLimit watchLimit = new StreamLimit(SERVICE, "WatchFleet", settings.get(ServeKeys.MAX_WATCHERS),
                ServeKeys.MAX_WATCHERS.name(), settings.get(ServeKeys.MAX_WATCHERS_PER_CONNECTION),
                ServeKeys.MAX_WATCHERS_PER_CONNECTION.name());
        StreamLimit holdLimit = new StreamLimit(SERVICE, "HoldFleet", settings.get(ServeKeys.MAX_HOLDS),
                ServeKeys.MAX_HOLDS.name(), settings.get(ServeKeys.MAX_HOLDS_PER_CONNECTION),
                ServeKeys.MAX_HOLDS_PER_CONNECTION.name());

        InetSocketAddress address = new InetSocketAddress(host, port);
        EventLoopGroup eventLoops = new MultiThreadIoEventLoopGroup(0, NamedThreads.daemon("rollcall-serve-io"),
                NioIoHandler.newFactory());
        ExecutorService executor = Executors.newCachedThreadPool(NamedThreads.daemon("rollcall-serve-call"));
        FleetService service = new FleetService(resolver, instanceId, watchLimit, holdLimit);
        XdsDoor xds = XdsDoor.open(resolver, settings, instanceId, Connections::of);
        int maxXdsRequestBytes = settings.get(ServeKeys.XDS_MAX_REQUEST_BYTES);
        NettyServerBuilder sb = (tls == null ? NettyServerBuilder.forAddress(address)
                : NettyServerBuilder.forAddress(address, tls))
                .channelType(NioServerSocketChannel.class)
                .bossEventLoopGroup(eventLoops)
                .workerEventLoopGroup(eventLoops)
                .executor(executor)
                .addTransportFilter(new Connections())
                // The tracer bounds requests and names the key; gRPC's own bound, checked first on a
                // message's declared length, would refuse without naming it.
                .maxInboundMessageSize(Integer.MAX_VALUE)
                .addStreamTracerFactory(new RequestBytesLimit(maxRequestBytes, ServeKeys.MAX_REQUEST_BYTES.name(), "",
                        method -> !method.equals(XdsDoor.METHOD)))
                .addStreamTracerFactory(new RequestBytesLimit(maxXdsRequestBytes,
                        ServeKeys.XDS_MAX_REQUEST_BYTES.name(), "", XdsDoor.METHOD::equals))
                .keepAliveTime(keepaliveTime.toNanos(), TimeUnit.NANOSECONDS)
                .keepAliveTimeout(keepaliveTimeout.toNanos(), TimeUnit.NANOSECONDS)
                .permitKeepAliveTime(PERMIT_KEEPALIVE_SECONDS, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .addService(service.definition());
        if (xds != null) {
            sb.addService(xds.definition());
        }
        if (token != null) {
            sb.intercept(token);
        }
        Server server = sb.build();
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            service.close();
            if (xds != null) {
                xds.close();
            }
            executor.shutdownNow();
            eventLoops.shutdownGracefully(0, 5, TimeUnit.SECONDS);
            throw new IOException("cannot serve rollcall.v1.FleetService on " + host + ":" + port + " ("
                    + ServeKeys.HOST.name() + ", " + ServeKeys.PORT.name() + "): " + e.getMessage(), e);
        }
        register(meters, service, xds);
        List<Meter> extraMeters = extra != null ? register(extra, service, xds) : List.of();
        FleetGrpcDoor door = new FleetGrpcDoor(server, service, xds, eventLoops, executor, extra, extraMeters);
        log.info("rollcall.v1.FleetService on {}{}{}", door.address(), tls == null ? "" : " (TLS)",
                token == null ? "" : ", bearer token required");
        return door;
    }

    private static List<Meter> register(MeterRegistry registry, FleetService service, XdsDoor xds) {
        List<Meter> meters = new ArrayList<>();
        meters.add(Gauge.builder("rollcall.serve.watchers", service, FleetService::watchers)
                .description("WatchFleet streams open").register(registry));
        meters.add(Gauge.builder("rollcall.serve.holds", service, FleetService::holds)
                .description("HoldFleet streams open").register(registry));
        meters.add(FunctionCounter.builder("rollcall.serve.deliveries", service, FleetService::deliveries)
                .description("snapshots written to WatchFleet streams").register(registry));
        meters.add(FunctionCounter.builder("rollcall.serve.skipped", service, FleetService::skipped)
                .description("snapshots superseded before a slow watcher read them").register(registry));
        if (xds != null) {
            meters.add(Gauge.builder("rollcall.serve.xds.streams", xds, XdsDoor::streams)
                    .description("xDS ADS streams open").register(registry));
            meters.add(FunctionCounter.builder("rollcall.serve.xds.nacks", xds, XdsDoor::nacks)
                    .description("xDS responses a client rejected (NACK)").register(registry));
            meters.add(FunctionCounter.builder("rollcall.serve.xds.slow-readers", xds, XdsDoor::slowReadersEnded)
                    .description("ADS streams ended because their client left responses unread while it kept"
                            + " requesting").register(registry));
        }
        return meters;
    }

    /** Where the service listens (the port chosen when 0 was asked for). */
    public InetSocketAddress address() {
        return (InetSocketAddress) server.getListenSockets().get(0);
    }

    /** The xDS name of the fleet the ADS door publishes; empty when the door is off. */
    public java.util.Optional<String> xdsFleet() {
        return java.util.Optional.ofNullable(xds).map(XdsDoor::fleet);
    }

    /** WatchFleet streams open now. */
    public int watchers() {
        return service.watchers();
    }

    /** HoldFleet streams open now. */
    public int holds() {
        return service.holds();
    }

    /**
     * Stops following the resolver, lets go of every held snapshot, cancels every stream (clients
     * see {@code UNAVAILABLE}) and frees the port.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        service.close(); // ends every watch and hold: a graceful shutdown would wait for them forever
        if (xds != null) {
            xds.close();
        }
        server.shutdown();
        try {
            if (!server.awaitTermination(1, TimeUnit.SECONDS)) {
                server.shutdownNow();
                server.awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
        executor.shutdownNow();
        eventLoops.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        if (extra != null) {
            extraMeters.forEach(extra::remove);
        }
    }
}
