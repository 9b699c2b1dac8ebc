package dev.rollcall.worker;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.api.internal.ConfigOrigins;
import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.memory.BufferAllocator;

/**
 * What a {@link RollcallWorker.Builder} was given (a null field reads its key at start), and the
 * reading of the worker's keys into {@link Resolved}. Not thread-safe: one builder owns it.
 */
final class WorkerOptions {

    static final long DEFAULT_SHUTDOWN_GRACE_MILLIS = WorkerKeys.SHUTDOWN_GRACE.defaultValue().toMillis();
    static final long DEFAULT_DRAIN_QUIET_MILLIS = WorkerKeys.DRAIN_QUIET.defaultValue().toMillis();

    final WorkerInfoService.Builder info = WorkerInfoService.builder();
    final Set<String> advertisedServices = new HashSet<>();
    final List<BindableService> services = new ArrayList<>();
    final List<ServerInterceptor> interceptors = new ArrayList<>();
    String host;
    String advertiseHost;
    Integer port;
    Boolean register;
    Boolean reflection;
    RollcallConfig config;
    ClassLoader classLoader;
    FlightProducer producer;
    BufferAllocator allocator;
    Long shutdownGraceMillis;
    Long drainQuietMillis;
    Path tlsCert;
    Path tlsKey;
    Path tlsClientCa;
    Integer maxRequestBytes;
    Integer maxWatches;
    Integer maxWatchesPerConnection;
    Integer maxCallsPerConnection;

    /**
     * The worker's settings, builder values winning over {@code rollcall.worker.*}; the TLS files are
     * read and checked here.
     */
    record Resolved(RollcallConfig config, String host, int port, String advertised, long shutdownGraceMillis,
                    long drainQuietMillis, boolean registering, WorkerTls tls, boolean reflection,
                    WorkerLimits limits) {
    }

    /** {@code value} when it is at least {@code min}; else the builder method {@code name} fails naming both. */
    static int atLeast(String name, int value, int min) {
        if (value < min) {
            throw new IllegalArgumentException(name + " " + value + " is below " + min);
        }
        return value;
    }

    /** {@code duration} in milliseconds when it is not negative; else the builder method {@code name} fails naming it. */
    static long millis(String name, Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException(name + " " + duration + " is negative");
        }
        return duration.toMillis();
    }

    /** The settings; a bad value's error names its source (file, Spring property source, environment). */
    Resolved resolve() {
        RollcallConfig cfg = config != null ? config : RollcallConfig.of(Map.of());
        try {
            return resolve(cfg);
        } catch (ConfigurationException e) {
            throw ConfigOrigins.named(e, cfg);
        }
    }

    private Resolved resolve(RollcallConfig cfg) {
        Settings settings = cfg.settings().scope("rollcall.worker.");
        String boundHost = host != null ? host : settings.get(WorkerKeys.HOST);
        int boundPort = port != null ? port : settings.get(WorkerKeys.PORT);
        String advertised = advertiseHost != null ? advertiseHost
                : settings.find(WorkerKeys.ADVERTISE_HOST).orElse(boundHost);
        long grace = shutdownGraceMillis != null ? shutdownGraceMillis
                : settings.get(WorkerKeys.SHUTDOWN_GRACE).toMillis();
        boolean registering = register != null ? register : settings.get(WorkerKeys.REGISTER);
        WorkerTls tls = WorkerTls.read(settings, tlsCert, tlsKey, tlsClientCa);
        boolean serveReflection = reflection != null ? reflection : settings.get(WorkerKeys.REFLECTION);
        WorkerLimits limits = WorkerLimits.read(settings, new WorkerLimits.Overrides(maxRequestBytes, maxWatches,
                maxWatchesPerConnection, maxCallsPerConnection));
        long quiet = drainQuietMillis != null ? drainQuietMillis
                : settings.get(WorkerKeys.DRAIN_QUIET).toMillis();
        return new Resolved(cfg, boundHost, boundPort, advertised, grace, quiet, registering, tls, serveReflection,
                limits);
    }
}
