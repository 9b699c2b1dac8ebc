package dev.rollcall.server;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.internal.ConfigOrigins;
import dev.rollcall.core.OtlpMetrics;
import dev.rollcall.core.RollcallMetrics;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.server.internal.grpc.FleetGrpcDoor;
import dev.rollcall.server.internal.http.FleetHttpDoor;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

/**
 * One resolver served to coordinators in any language: {@code rollcall.v1.FleetService} (GetFleet,
 * WatchFleet, HoldFleet) and xDS (ADS, for gRPC clients dialling {@code xds:///NAME} and Envoy) on a
 * gRPC port, and {@code /readyz}, {@code /healthz}, {@code /metrics}
 * (Prometheus text) and the console on an HTTP port. What {@code rollcall serve} runs, and what a JVM
 * host (the Spring Boot starter, an application of yours) embeds:
 *
 * <pre>{@code
 * try (WorkerResolver resolver = WorkerResolver.fromConfig();
 *      FleetServer server = FleetServer.builder(resolver).config(RollcallConfig.load()).start()) {
 *     server.awaitTermination();
 * }
 * }</pre>
 *
 * <p>With {@code rollcall.metrics.otlp.url} set, the same meters (the resolver's and the server's)
 * are also pushed over OTLP ({@link OtlpMetrics}), the resource naming {@code service.name}
 * {@code rollcall-serve}, {@code service.version} Rollcall's version and {@code service.instance.id}
 * {@link #instanceId()}; {@link #close()} exports once more and stops that.
 *
 * <p>The server never owns the resolver: closing the server leaves it running, and the resolver
 * must outlive the server. Thread-safe; {@link #close()} is idempotent, ends every watch and hold
 * (a hold's end lets go of its snapshot) and frees both ports.
 */
public final class FleetServer implements AutoCloseable {

    private final String instanceId;
    private final FleetGrpcDoor grpc;
    private final FleetHttpDoor http;
    private final OtlpExport otlp;
    private final CountDownLatch closed = new CountDownLatch(1);

    private FleetServer(String instanceId, FleetGrpcDoor grpc, FleetHttpDoor http, OtlpExport otlp) {
        this.instanceId = instanceId;
        this.grpc = grpc;
        this.http = http;
        this.otlp = otlp;
    }

    /** A builder for a server of {@code resolver}'s snapshots. */
    public static Builder builder(WorkerResolver resolver) {
        return new Builder(resolver);
    }

    /** Where {@code rollcall.v1.FleetService} listens (with the port chosen when 0 was asked for). */
    public InetSocketAddress grpcAddress() {
        return grpc.address();
    }

    /** Where the HTTP endpoints listen; empty when the builder turned them off. */
    public Optional<InetSocketAddress> httpAddress() {
        return Optional.ofNullable(http).map(FleetHttpDoor::address);
    }

    /**
     * The name gRPC clients dial as {@code xds:///NAME} on {@link #grpcAddress()}
     * ({@code rollcall.serve.xds.fleet}); empty when {@code rollcall.serve.xds.enabled} is false.
     */
    public Optional<String> xdsFleet() {
        return grpc.xdsFleet();
    }

    /** New each time a server starts: {@code FleetSnapshot.service_instance_id}. */
    public String instanceId() {
        return instanceId;
    }

    /** WatchFleet streams open now. */
    public int watchers() {
        return grpc.watchers();
    }

    /** HoldFleet streams open now. */
    public int holds() {
        return grpc.holds();
    }

    /** Blocks until {@link #close()} has run. */
    public void awaitTermination() throws InterruptedException {
        closed.await();
    }

    @Override
    public void close() {
        try {
            if (http != null) {
                http.close();
            }
        } finally {
            try {
                grpc.close();
            } finally {
                if (otlp != null) {
                    otlp.close();
                }
                closed.countDown();
            }
        }
    }

    /** The OTLP registry and the resolver's meters bound to it; closing unhooks them, then exports once more. */
    private record OtlpExport(MeterRegistry registry, RollcallMetrics resolverMeters) implements AutoCloseable {

        /** Empty without {@code rollcall.metrics.otlp.url}; a bad value fails naming its key. */
        static Optional<OtlpExport> start(WorkerResolver resolver, RollcallConfig config, String instanceId) {
            return OtlpMetrics.start(config, "rollcall-serve", rollcallVersion(), instanceId).map(registry -> {
                RollcallMetrics meters = new RollcallMetrics(resolver);
                meters.bindTo(registry);
                return new OtlpExport(registry, meters);
            });
        }

        @Override
        public void close() {
            try {
                resolverMeters.close();
            } finally {
                registry.close();
            }
        }

        /** The version Maven built, from a filtered resource. */
        private static String rollcallVersion() {
            Properties p = new Properties();
            try (InputStream in = FleetServer.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (java.io.IOException e) {
                throw new UncheckedIOException("cannot read the rollcall version", e);
            }
            return p.getProperty("version", "unknown");
        }
    }

    @Override
    public String toString() {
        return "FleetServer[grpc " + grpc.address() + (http != null ? ", http " + http.address() : "") + "]";
    }

    /** Configures and starts a {@link FleetServer}. Not thread-safe; one start per builder. */
    public static final class Builder {
        private static final String BUILDER = "FleetServer.Builder";

        private final WorkerResolver resolver;
        private RollcallConfig config = RollcallConfig.of(Map.of());
        private final Map<String, String> overrides = new LinkedHashMap<>();
        private boolean http = true;
        private MeterRegistry meters;

        private Builder(WorkerResolver resolver) {
            this.resolver = Objects.requireNonNull(resolver, "resolver");
        }

        /**
         * Reads the {@code rollcall.serve.*} keys (and the console's {@code rollcall.console.*}) from
         * {@code config}; the builder's own setters win over it, whatever the order of the calls.
         */
        public Builder config(RollcallConfig config) {
            this.config = Objects.requireNonNull(config, "config");
            return this;
        }

        /** {@code rollcall.serve.host}. */
        public Builder host(String host) {
            overrides.put(ServerKeys.HOST.name(), Objects.requireNonNull(host, "host"));
            return this;
        }

        /** {@code rollcall.serve.port}; 0: any free port. */
        public Builder port(int port) {
            overrides.put(ServerKeys.PORT.name(), Integer.toString(ServerKeys.PORT.check(port, BUILDER)));
            return this;
        }

        /** {@code rollcall.serve.http-port}; 0: any free port. */
        public Builder httpPort(int port) {
            overrides.put(ServerKeys.HTTP_PORT.name(), Integer.toString(ServerKeys.HTTP_PORT.check(port, BUILDER)));
            return this;
        }

        /**
         * Whether to serve the HTTP endpoints (default {@code true}); a host that has its own (Spring
         * Boot's actuator) turns them off.
         */
        public Builder http(boolean serve) {
            this.http = serve;
            return this;
        }

        /**
         * Where the server's own meters (watchers, holds, deliveries) go besides {@code /metrics}: a
         * host's registry. Optional.
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.meters = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * Binds both ports and serves.
         *
         * @throws dev.rollcall.api.ConfigurationException naming the key and value that are wrong
         * @throws IOException when a port cannot be bound
         */
        public FleetServer start() throws IOException {
            RollcallConfig effective = config;
            for (Map.Entry<String, String> e : overrides.entrySet()) {
                effective = effective.with(e.getKey(), e.getValue(), BUILDER);
            }
            try {
                return start(effective);
            } catch (ConfigurationException e) {
                throw ConfigOrigins.named(e, effective);
            }
        }

        /** Where the server's own meters go besides /metrics: the host's registry, the OTLP one, both or none. */
        private MeterRegistry extraMeters(OtlpExport otlp) {
            if (otlp == null) {
                return meters;
            }
            return meters == null ? otlp.registry()
                    : new CompositeMeterRegistry(Clock.SYSTEM, List.of(meters, otlp.registry()));
        }

        private FleetServer start(RollcallConfig effective) throws IOException {
            String instanceId = UUID.randomUUID().toString();
            PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            OtlpExport otlp = OtlpExport.start(resolver, effective, instanceId).orElse(null);
            FleetGrpcDoor grpc;
            FleetHttpDoor door = null;
            try {
                grpc = FleetGrpcDoor.start(resolver, effective, instanceId, prometheus, extraMeters(otlp));
            } catch (IOException | RuntimeException e) {
                if (otlp != null) {
                    otlp.close();
                }
                throw e;
            }
            if (http) {
                try {
                    door = FleetHttpDoor.start(resolver, effective, prometheus);
                } catch (IOException | RuntimeException e) {
                    grpc.close();
                    if (otlp != null) {
                        otlp.close();
                    }
                    throw e;
                }
            }
            return new FleetServer(instanceId, grpc, door, otlp);
        }
    }
}
