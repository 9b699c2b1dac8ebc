package dev.rollcall.spring.autoconfigure;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code rollcall.*} keys of core and of this starter, described for IDEs: the configuration
 * processor turns these records into {@code META-INF/spring-configuration-metadata.json}, so that
 * application.yml completes them with their defaults. They are never bound: core reads the keys
 * from the {@code Environment} ({@link RollcallAutoConfiguration#rollcallConfig}) and validates them,
 * with the errors {@code rollcall.properties} gives. A backend's or a policy's keys
 * ({@code rollcall.discovery.<type>.*}, {@code rollcall.policy.<type>.*}) are in its module's README.
 *
 * @param discovery  {@code rollcall.discovery.*}
 * @param policy     {@code rollcall.policy.*}
 * @param probe      {@code rollcall.probe.*}
 * @param schemas    {@code rollcall.schemas.*}
 * @param selector   a Kubernetes label selector every worker must match before the policy sees it
 * @param preferLabels {@code rollcall.prefer-labels.*} (the selector itself is {@code rollcall.prefer-labels})
 * @param readiness  {@code rollcall.readiness.*}
 * @param resolver   {@code rollcall.resolver.*}
 * @param worker     {@code rollcall.worker.*}
 * @param drain      {@code rollcall.drain.*}
 * @param subset     {@code rollcall.subset.*}
 * @param publish    {@code rollcall.publish.*}
 */
@ConfigurationProperties("rollcall")
public record RollcallProperties(Discovery discovery, Policy policy, Probe probe, Schemas schemas, String selector,
                                 PreferLabels preferLabels, Readiness readiness, Resolver resolver, Worker worker,
                                 Drain drain, Subset subset,
                                 Publish publish) {

    /**
     * How often snapshots are published.
     *
     * @param maxRate snapshots per second at most (1 to 1000); changes within 1 / max-rate of the last snapshot
     *                join the next one, so news that takes a worker away waits at most that long (50 ms by default)
     */
    public record Publish(@DefaultValue("20") int maxRate) {
    }

    /**
     * Subsets: each coordinator uses only some of the workers the policy accepts (docs/subsets.md).
     *
     * @param size          use only this many of the accepted workers, those of highest rendezvous weight on the
     *                      coordinator id; the others are OUTSIDE_SUBSET and keep no probe channel. Unset: all.
     *                      Not with drain.exact
     * @param coordinatorId the id the subset is chosen by; default the HOSTNAME environment variable, else the
     *                      host's name, else a random UUID (a restarted coordinator then picks another subset)
     */
    public record Subset(Integer size, String coordinatorId) {
    }

    /**
     * Exact drain, the coordinator's side.
     *
     * @param exact hold workers only under resolver.lease() and release each draining worker as soon as no
     *              lease needs it, so that it stops then instead of after drain-quiet; needs probe.keep-channels
     */
    public record Drain(@DefaultValue("false") boolean exact) {
    }

    /**
     * Where candidates come from.
     *
     * @param type          which discovery module to use: static, etcd, consul, k8s, dns, zookeeper, or yours
     * @param maxCandidates the most candidates one set from discovery may list; a larger one is refused whole
     * @param cache         the last-known-good candidate file
     */
    public record Discovery(String type, @DefaultValue("100000") int maxCandidates, Cache cache) {
    }

    /**
     * The last-known-good candidate file.
     *
     * @param file       the file; none by default
     * @param maxWait    how long a starting resolver waits for discovery before using the file
     * @param maxBytes   a larger file is refused before it is read
     * @param requireTls leave the file's plaintext endpoints out when starting from it
     * @param maxAge     a file written longer ago is not started from (one WARN, and the snapshot says why); 0s: any age
     */
    public record Cache(String file, @DefaultValue("3s") Duration maxWait, @DefaultValue("67108864") long maxBytes,
                        @DefaultValue("false") boolean requireTls, @DefaultValue("1d") Duration maxAge) {
    }

    /**
     * Which versions may be mixed.
     *
     * @param type which version policy to use: exact, semver, rollout, prefer, or yours
     */
    public record Policy(String type) {
    }

    /**
     * How workers are probed.
     *
     * @param timeout          deadline of each WorkerInfo probe, connection included
     * @param concurrency      probes in flight at most
     * @param backoff          retry delays after a failed probe
     * @param refreshInterval  re-probe a worker that answered after this long even if nothing changed
     * @param keepChannels     keep one idle connection per worker, so a restart in place is noticed at once
     * @param maxKeptChannels  workers holding a kept channel at most; the others are probed over a connection of
     *                         their own each time (a restart noticed by instance id). Default derived from the
     *                         process's descriptor limit: half of it less 256, from 64 to 10000 (4096 where
     *                         unknown); 0 only with keep-channels=false
     * @param keepaliveTime    heartbeat asked of each watched worker; HTTP/2 pings (every 10 s at least)
     * @param keepaliveTimeout silence past the heartbeat after which a worker's host counts as cut off
     * @param maxResponseBytes largest WorkerInfo answer accepted
     * @param tls              TLS for grpcs:// workers
     * @param protocol         how workers are asked: rollcall, datafusion-distributed, grpc-health, none, or yours
     *                         (docs/probe-protocols.md says what each can see)
     * @param grpcHealth       the grpc-health protocol's keys
     */
    public record Probe(@DefaultValue("2s") Duration timeout, @DefaultValue("64") int concurrency, Backoff backoff,
                        @DefaultValue("10m") Duration refreshInterval, @DefaultValue("true") boolean keepChannels,
                        Integer maxKeptChannels,
                        @DefaultValue("5s") Duration keepaliveTime, @DefaultValue("3s") Duration keepaliveTimeout,
                        @DefaultValue("1048576") int maxResponseBytes, ProbeTls tls,
                        @DefaultValue("rollcall") String protocol, GrpcHealth grpcHealth) {
    }

    /**
     * The {@code grpc-health} probe protocol.
     *
     * @param service the service name asked about in grpc.health.v1.Health; empty for the whole server
     */
    public record GrpcHealth(@DefaultValue("") String service) {
    }

    /**
     * Retry delays after a failed probe: initial, doubling up to max, up to 20 % shorter at random.
     *
     * @param initial the first retry delay
     * @param max     the longest retry delay
     */
    public record Backoff(@DefaultValue("250ms") Duration initial, @DefaultValue("30s") Duration max) {
    }

    /**
     * TLS of the probes (PEM files).
     *
     * @param ca        CA certificates grpcs:// workers' certificates must chain to; default the JDK's trust store
     * @param cert      client certificate chain, for workers requiring mutual TLS
     * @param key       PKCS#8 private key of cert; never logged
     * @param authority name the workers' certificates are checked against; default each endpoint's host
     */
    public record ProbeTls(String ca, String cert, String key, String authority) {
    }

    /**
     * The workers' protobuf schemas.
     *
     * @param fetch            fetch each worker version's schema once through gRPC server reflection
     * @param maxResponseBytes the most one version's reflection answers may add up to
     */
    public record Schemas(@DefaultValue("true") boolean fetch, @DefaultValue("4194304") int maxResponseBytes) {
    }

    /**
     * Preferred workers (the selector itself is {@code rollcall.prefer-labels}).
     *
     * @param minWorkers preferred workers that must be compatible for the preference to apply
     * @param hold       after a fall-back, how long the preferred ones must be enough again before it returns
     */
    public record PreferLabels(@DefaultValue("1") int minWorkers, @DefaultValue("30s") Duration hold) {
    }

    /**
     * When the coordinator is ready (the {@code rollcall} health indicator, {@code resolver.ready()}).
     *
     * @param minWorkers compatible workers needed to be ready; 0 = always ready
     * @param version    when set, only compatible workers of exactly this version count
     * @param maxStale   not ready once discovery has been failing (the snapshot stale) for longer than this; default
     *                   5m when versions are discovery's claims (probe.protocol none, grpc-health), no bound when
     *                   workers answer for themselves (rollcall, datafusion-distributed); 0s: no bound
     */
    public record Readiness(@DefaultValue("1") int minWorkers, String version, Duration maxStale) {
    }

    /**
     * The coordinator side of this starter.
     *
     * @param enabled whether to create the WorkerResolver bean (and health, endpoint, meters)
     */
    public record Resolver(@DefaultValue("true") boolean enabled) {
    }

    /**
     * The worker side: a RollcallWorker serving WorkerInfo and the application's FlightProducer bean.
     *
     * @param enabled                 whether to create and start the RollcallWorker bean
     * @param version                 the version coordinators see
     * @param host                    address to bind
     * @param port                    port to bind; 0 = any free port
     * @param advertiseHost           the host coordinators reach; default the bound host
     * @param register                register with the backend named by rollcall.discovery.type
     * @param shutdownGrace           how long closing lets in-flight calls finish after the drain
     * @param drainQuiet              after draining, wait until no call started for this long
     * @param reflection              serve gRPC server reflection
     * @param tls                     TLS of the worker's port
     * @param maxRequestBytes         largest request of Rollcall's own calls and of reflection
     * @param maxWatches              WatchWorkerInfo streams served at once in all
     * @param maxWatchesPerConnection WatchWorkerInfo streams at once over one connection
     * @param maxCallsPerConnection   calls of any kind open at once on one connection
     */
    public record Worker(@DefaultValue("false") boolean enabled, String version, @DefaultValue("127.0.0.1") String host,
                         @DefaultValue("0") int port, String advertiseHost, @DefaultValue("false") boolean register,
                         @DefaultValue("5s") Duration shutdownGrace, @DefaultValue("500ms") Duration drainQuiet,
                         @DefaultValue("true") boolean reflection, WorkerTls tls,
                         @DefaultValue("4096") int maxRequestBytes, @DefaultValue("1024") int maxWatches,
                         @DefaultValue("16") int maxWatchesPerConnection,
                         @DefaultValue("250") int maxCallsPerConnection) {
    }

    /**
     * TLS of the worker's port (PEM files).
     *
     * @param cert     certificate chain: serve TLS only
     * @param key      PKCS#8 private key of cert; never logged
     * @param clientCa CA certificates: require client certificates they signed
     */
    public record WorkerTls(String cert, String key, String clientCa) {
    }
}
