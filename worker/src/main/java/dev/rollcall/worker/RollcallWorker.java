package dev.rollcall.worker;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.registration.WorkerRegistration;
import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker process's server in one call: its Arrow Flight service, Rollcall's
 * {@link WorkerInfoService}, gRPC server reflection ({@code grpc.reflection.v1}, from which coordinators
 * fetch the schemas of your services once per version) and your own gRPC services, on one gRPC
 * server and port.
 *
 * <pre>{@code
 * try (RollcallWorker worker = RollcallWorker.builder()
 *         .version("1.4.0")
 *         .flightProducer(myProducer)
 *         .port(7001)
 *         .start()) {
 *     worker.awaitTermination();
 * }
 * }</pre>
 *
 * <p><b>TLS.</b> With {@link Builder#tls(Path, Path)} (or {@code rollcall.worker.tls.cert} and
 * {@code rollcall.worker.tls.key}) the one port serves TLS only, WorkerInfo and Arrow Flight alike,
 * and {@link #endpoint()} (hence the registration) says {@code grpcs://}. With
 * {@link Builder#clientCa(Path)} ({@code rollcall.worker.tls.client-ca}) every client must present
 * a certificate signed by that CA (mutual TLS); a connection without one is refused during the
 * handshake. Files are PEM (keys PKCS#8), read and checked once by {@link Builder#start()}: a bad one
 * fails naming its key and path, never its content.
 *
 * <p><b>Limits.</b> What a client of the port can make the worker hold is bounded, each bound with
 * a key and a builder method, and a call past one is refused naming both: the size of a request to
 * Rollcall's own calls and reflection ({@link Builder#maxRequestBytes}), {@code WatchWorkerInfo}
 * streams in all and per connection ({@link Builder#maxWatches},
 * {@link Builder#maxWatchesPerConnection}), calls open at once per connection
 * ({@link Builder#maxCallsPerConnection}). HTTP/2 keepalive pings are permitted every 5 s, with or
 * without calls. {@link #drain()}, {@link #labels} and the other changes return at once: watching
 * coordinators are told from another thread, so a change costs the same with one watcher or a
 * thousand.
 *
 * <p>Thread-safe. {@link #close()} stops the server (in-flight calls get a grace period), the
 * Flight executor, and the allocator if Rollcall created it. Arrow needs
 * {@code --add-opens=java.base/java.nio=ALL-UNNAMED} on the JVM command line, and on Java 24 or newer
 * also {@code --sun-misc-unsafe-memory-access=allow} ({@link Builder#start()} fails naming it when
 * Arrow cannot allocate). What the Flight producer throws is logged at WARN with its stack: the
 * client only sees {@code INTERNAL}.
 */
public final class RollcallWorker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RollcallWorker.class);

    private final WorkerServer server;
    private final WorkerInfoService info;
    private final WorkerEndpoint endpoint;
    private final CallsInFlight calls;
    private final WorkerDrain drain;
    private final WorkerRegistrar registrar;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Made by {@link WorkerAssembly}; {@link #close()} releases what it is given. */
    RollcallWorker(WorkerServer server, WorkerInfoService info, WorkerEndpoint endpoint, CallsInFlight calls,
                   WorkerDrain drain, WorkerRegistrar registrar) {
        PushThread.hold(); // released by close()
        this.server = server;
        this.info = info;
        this.endpoint = endpoint;
        this.calls = calls;
        this.drain = drain;
        this.registrar = registrar;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Where coordinators reach this worker, e.g. {@code grpc://127.0.0.1:7001}. */
    public WorkerEndpoint endpoint() {
        return endpoint;
    }

    /** The port the server is bound to (useful with port 0). */
    public int port() {
        return endpoint.port();
    }

    /** The version this worker reports. */
    public String version() {
        return info.version();
    }

    /** This process start's instance id. */
    public String instanceId() {
        return info.instanceId();
    }

    /** Everything coordinators learn about this worker: endpoint, version, instance id, labels, services. */
    public WorkerInfo info() {
        return info.describe(endpoint);
    }

    /** The discovery entry this worker keeps, when it registers ({@code rollcall.worker.register=true}). */
    public Optional<WorkerRegistration> registration() {
        return registrar.entry();
    }

    /**
     * Stops taking new work: says {@link ServingState#DRAINING} to every coordinator, which leaves
     * this worker out of new snapshots within milliseconds (a snapshot a query pinned before keeps
     * it, so the query finishes here). Calls keep being served. Reversible with {@link #resume()}.
     */
    public void drain() {
        drain.drain(true);
    }

    /** Takes new work again after {@link #drain()}. */
    public void resume() {
        drain.resume("resumed: takes new work");
    }

    /** Ready after a start with {@link Builder#startNotServing()} (caches warm): takes new work from now on. */
    public void serving() {
        drain.resume("serving");
    }

    /** Whether it says it takes new work. */
    public ServingState state() {
        return info.state();
    }

    /** Replaces the labels it advertises; watching coordinators learn them at once. */
    public void labels(Map<String, String> labels) {
        info.labels(labels);
    }

    /**
     * Replaces what it says it can do, e.g. {@code worker.capabilities(Capabilities.of("udf:geo_distance"))}
     * once a UDF is registered; watching coordinators learn it at once, and a query that requires
     * a capability it dropped leaves it out from the next snapshot on.
     */
    public void capabilities(Capabilities capabilities) {
        info.capabilities(capabilities);
    }

    /**
     * Coordinators watching this worker now ({@code WatchWorkerInfo} streams): the ones a
     * {@link #drain()} reaches at once.
     */
    public int coordinatorsWatching() {
        return info.watchers();
    }

    /**
     * Coordinators that hold this worker now (exact drain): watch streams opened with a
     * {@code holder_id} that have not ended and, while it drains, have not released it.
     * {@link #close()} waits for them to reach 0.
     */
    public int coordinatorsHolding() {
        return info.holding();
    }

    /** Calls being served now (Arrow Flight and your services; not Rollcall's own). */
    public int callsInFlight() {
        return calls.count();
    }

    /** Blocks until the server has stopped. */
    public void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    /**
     * Stops gracefully: drains first (coordinators that watch this worker stop planning onto it at
     * once, while it still serves), then waits, at most {@code shutdown-grace}, until the calls in
     * flight are done and every coordinator that holds it ({@link #coordinatorsHolding()}) has
     * released it or its stream has ended; when coordinators without a holder id watched it at the
     * drain (or nobody did), also until neither a call started nor the drain was announced for
     * {@code drain-quiet}. Then it leaves discovery, ends the coordinators' watches and stops the
     * server, cancelling whatever is still running after a second's grace (a tenth of a second after
     * an exact drain that ended: every holder let go, no call in flight, so that a connected peer
     * that went silent does not hold it). It releases the Flight executor and Rollcall's own
     * allocator. The log says whom it waited for and how long. When it returns, the port can be
     * bound again (a restart in place). Idempotent.
     */
    @Override
    public void close() {
        if (closed.getAndSet(true)) {
            return;
        }
        drain.drain(false); // after a drain() this changes nothing: its wait started then
        boolean nothingRuns = drain.awaitDone();
        long stopping = System.nanoTime();
        registrar.leave(endpoint.url());
        info.endWatches();
        server.stop(nothingRuns);
        PushThread.release();
        log.debug("worker {} version '{}' stopped, {} ms after its wait ended", endpoint.url(), info.version(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopping));
    }

    @Override
    public String toString() {
        return "RollcallWorker[" + endpoint.url() + " version='" + info.version() + "']";
    }

    /**
     * Configures a worker. Values set through methods win over {@link #config(RollcallConfig)}. Not
     * thread-safe; {@link #start()} validates and copies everything.
     */
    public static final class Builder extends WorkerLimitsBuilder {

        private Builder() {
        }

        @Override
        Builder self() {
            return this;
        }

        /**
         * Reads the worker's keys ({@code rollcall.worker.*}, each with its default in
         * {@code docs/configuration.md}; each has a method here that overrides it) from
         * {@code config}. With {@code rollcall.worker.register=true}, {@link #start()} registers the
         * worker with the backend named by {@code rollcall.discovery.type}, with that backend's
         * settings. A typo among the worker's keys fails {@link #start()} naming the nearest key; the
         * coordinator's keys in the same file are left alone.
         */
        public Builder config(RollcallConfig config) {
            o.config = Objects.requireNonNull(config, "config");
            return this;
        }

        /** Registers (or not) with the discovery backend; overrides {@code rollcall.worker.register}. */
        public Builder register(boolean register) {
            o.register = register;
            return this;
        }

        /** Where registration providers are looked up; default the thread's context class loader. */
        public Builder classLoader(ClassLoader loader) {
            o.classLoader = Objects.requireNonNull(loader, "loader");
            return this;
        }

        /**
         * The host coordinators reach this worker at, when it differs from the bound one (binding
         * {@code 0.0.0.0}, or behind NAT). Required to register a worker bound to a wildcard address.
         */
        public Builder advertiseHost(String host) {
            o.advertiseHost = Objects.requireNonNull(host, "host");
            return this;
        }

        /** The version coordinators see; default {@code ""}. */
        public Builder version(String version) {
            o.info.version(version);
            return this;
        }

        /** A fact about this worker reported over {@code WorkerInfo} (zone, engine version). */
        public Builder label(String key, String value) {
            o.info.label(key, value);
            return this;
        }

        /**
         * What this worker can do, each as {@link Capabilities#of(String...)} reads it:
         * {@code capabilities("udf:geo_distance", "datafusion=55.0.1", "plan-protocol=3")}. Queries
         * that require one ({@code Requirements}) run only on workers that have it.
         *
         * @throws IllegalArgumentException naming a malformed capability, one given twice, or too many
         */
        public Builder capabilities(String... capabilities) {
            o.info.capabilities(Capabilities.of(capabilities));
            return this;
        }

        /**
         * A service (function, task kind) this worker advertises. A gRPC service added with
         * {@link #service(BindableService)} is advertised on its own unless one of its name is
         * advertised here.
         */
        public Builder advertise(ServiceInfo service) {
            o.info.service(service);
            o.advertisedServices.add(service.name());
            return this;
        }

        /** Overrides the random per-start instance id. */
        public Builder instanceId(String instanceId) {
            o.info.instanceId(instanceId);
            return this;
        }

        /**
         * The address to bind and advertise; default {@code 127.0.0.1}. Use the address coordinators
         * reach this worker at (or {@code 0.0.0.0} to bind every interface).
         */
        public Builder host(String host) {
            o.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** The port; default 0, a free port chosen by the system. */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port " + port + " is outside 0..65535");
            }
            o.port = port;
            return this;
        }

        /** What the worker serves over Arrow Flight; default a producer that implements nothing. */
        public Builder flightProducer(FlightProducer producer) {
            o.producer = Objects.requireNonNull(producer, "producer");
            return this;
        }

        /** The allocator Flight uses; default a new root allocator that {@link #close()} closes. */
        public Builder allocator(BufferAllocator allocator) {
            o.allocator = Objects.requireNonNull(allocator, "allocator");
            return this;
        }

        /**
         * Whether to serve gRPC server reflection ({@code grpc.reflection.v1.ServerReflection}) for
         * the services of this server; overrides {@code rollcall.worker.reflection} (default true).
         * Coordinators fetch each version's schema through it; without it the version's schema is empty.
         */
        public Builder reflection(boolean serve) {
            o.reflection = serve;
            return this;
        }

        /**
         * Another gRPC service to serve on the same server and port. Unless a service of its name is
         * {@link #advertise advertised} explicitly, it is advertised over {@code WorkerInfo} as a
         * public service whose handlers are its methods, so that a coordinator's
         * {@code target(service, method, caller)} and the schema use the same names.
         */
        public Builder service(BindableService service) {
            o.services.add(Objects.requireNonNull(service, "service"));
            return this;
        }

        /** An interceptor around every call this server takes (authentication, metrics, counting). */
        public Builder intercept(ServerInterceptor interceptor) {
            o.interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
            return this;
        }

        /**
         * Serves TLS with this certificate chain and PKCS#8 private key (PEM files); overrides
         * {@code rollcall.worker.tls.cert} and {@code rollcall.worker.tls.key}. The endpoint becomes
         * {@code grpcs://}.
         */
        public Builder tls(Path certificateChainPemFile, Path privateKeyPemFile) {
            o.tlsCert = Objects.requireNonNull(certificateChainPemFile, "certificateChainPemFile");
            o.tlsKey = Objects.requireNonNull(privateKeyPemFile, "privateKeyPemFile");
            return this;
        }

        /**
         * Requires every client to present a certificate signed by one of these CAs (PEM file):
         * mutual TLS. Needs {@link #tls(Path, Path)}; overrides {@code rollcall.worker.tls.client-ca}.
         */
        public Builder clientCa(Path caPemFile) {
            o.tlsClientCa = Objects.requireNonNull(caPemFile, "caPemFile");
            return this;
        }

        /**
         * Starts {@link ServingState#NOT_SERVING}: coordinators see it but give it no work until
         * {@link RollcallWorker#serving()} (warm caches first).
         */
        public Builder startNotServing() {
            o.info.state(ServingState.NOT_SERVING);
            return this;
        }

        /**
         * Binds the server and starts serving; with registration on, registers the worker and
         * returns once the backend has acknowledged it.
         *
         * @throws IOException when the address cannot be bound (port in use)
         * @throws IllegalStateException when Arrow cannot allocate memory on this JVM; the message
         *         names the JVM flag it needs ({@code --sun-misc-unsafe-memory-access=allow} on Java 24+)
         * @throws ConfigurationException on a bad worker key, or a backend that no module provides
         * @throws RegistrationException when registration failed; the
         *         server is stopped again
         */
        public RollcallWorker start() throws IOException {
            return WorkerAssembly.start(o);
        }
    }
}
