package dev.rollcall.core;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Scheduler;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import dev.rollcall.api.Settings;
import dev.rollcall.api.Ticker;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.internal.ConfigOrigins;
import dev.rollcall.api.internal.UnknownKeys;
import dev.rollcall.api.labels.LabelSelector;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.KeyPaths;
import dev.rollcall.core.internal.catalog.CoreKeys;
import dev.rollcall.core.internal.settings.BuilderValues;
import dev.rollcall.core.internal.settings.Plugins;
import dev.rollcall.core.internal.settings.ResolverSettings;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The setters of {@link WorkerResolver.Builder}, which is the name users write (as the JDK's
 * {@code StringBuilder} over {@code AbstractStringBuilder}). A setter for a configuration key puts
 * the value into the configuration's top layer ({@link BuilderValues}), checked at once against
 * the key's declaration in {@link CoreKeys}: the name, default and bounds of each key are written
 * there only, its meaning in docs/configuration.md. Not thread-safe.
 */
abstract class AbstractResolverBuilder {

    /** What was given in code for catalog keys: the top layer of the configuration. */
    final BuilderValues given = new BuilderValues();
    /** The routing key paths given in code, a typed value no text key holds. */
    KeyPaths keyPaths;
    RollcallConfig config;
    WorkerDiscovery discovery;
    VersionPolicy policy;
    Clock clock = Clock.systemUTC();
    Ticker ticker;
    Scheduler scheduler;
    String name;
    ClassLoader classLoader;

    AbstractResolverBuilder() {
    }

    /** This builder, as the type users hold. */
    abstract WorkerResolver.Builder self();

    /** What {@code build()} starts a resolver with, read and checked. */
    record Parts(ResolverSettings settings, ReadinessRule readiness, Plugins chosen, Settings config) {
    }

    /**
     * Checks the configuration, the values given here its top layer: keys no catalog declares first
     * (before anything is read, so that a typo is never reported as the key it misses), then every
     * value; finds the backend, the policy and the probe protocol.
     *
     * @throws ConfigurationException naming the key, the value and its source, or the type that no
     *                                module provides (with the ones found)
     */
    Parts parts() {
        ClassLoader loader = classLoader != null ? classLoader : Thread.currentThread().getContextClassLoader();
        RollcallConfig cfg = given.over(config != null ? config : RollcallConfig.of(Map.of()));
        try {
            Settings root = cfg.settings();
            UnknownKeys.checkDeclared(cfg, KeyCatalog.all(loader),
                    discovery != null ? null : root.raw(CoreKeys.DISCOVERY_TYPE.name()).orElse(null),
                    policy != null ? null : root.raw(CoreKeys.POLICY_TYPE.name()).orElse(null));
            ResolverSettings settings = ResolverSettings.read(cfg, keyPaths);
            ReadinessRule readiness = ReadinessRule.read(root);
            return new Parts(settings, readiness, Plugins.chooseFor(settings, cfg, discovery, policy, null, loader), root);
        } catch (ConfigurationException e) {
            throw ConfigOrigins.named(e, cfg);
        }
    }

    private <T> WorkerResolver.Builder put(SettingKey<T> key, T value) {
        given.put(key, value);
        return self();
    }

    /** Where unset values come from; default none (only the values set here, and defaults). */
    public WorkerResolver.Builder config(RollcallConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        return self();
    }

    /** The discovery backend to use instead of {@code rollcall.discovery.type}. The resolver closes it. */
    public WorkerResolver.Builder discovery(WorkerDiscovery discovery) {
        this.discovery = Objects.requireNonNull(discovery, "discovery");
        return self();
    }

    /** The policy to use instead of {@code rollcall.policy.type}. */
    public WorkerResolver.Builder policy(VersionPolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
        return self();
    }

    /**
     * {@code rollcall.probe.timeout}: the deadline of each probe, connection included.
     *
     * @throws IllegalArgumentException naming the key when {@code timeout} is not positive
     */
    public WorkerResolver.Builder probeTimeout(Duration timeout) {
        return put(CoreKeys.PROBE_TIMEOUT, timeout);
    }

    /** {@code rollcall.probe.concurrency}: at most this many probes in flight. */
    public WorkerResolver.Builder probeConcurrency(int concurrency) {
        return put(CoreKeys.PROBE_CONCURRENCY, concurrency);
    }

    /**
     * {@code rollcall.probe.backoff.initial} and {@code .max}: retry delays after failed probes,
     * {@code initial} doubling up to {@code max}, each up to 20 % shorter at random; a worker that
     * fails again soon after answering keeps its count (flap damping).
     *
     * @throws IllegalArgumentException naming the key when either is not positive or {@code max} is
     *                                  below {@code initial}
     */
    public WorkerResolver.Builder backoff(Duration initial, Duration max) {
        CoreKeys.BACKOFF_INITIAL.check(initial, BuilderValues.ORIGIN);
        CoreKeys.BACKOFF_MAX.check(max, BuilderValues.ORIGIN);
        if (max.compareTo(initial) < 0) {
            throw new IllegalArgumentException(CoreKeys.BACKOFF_MAX.name() + "='" + SettingType.DURATION.text(max)
                    + "' (" + BuilderValues.ORIGIN + "): expected at least " + CoreKeys.BACKOFF_INITIAL.name() + " ("
                    + SettingType.DURATION.text(initial) + ")");
        }
        given.put(CoreKeys.BACKOFF_INITIAL, initial);
        return put(CoreKeys.BACKOFF_MAX, max);
    }

    /** {@code rollcall.probe.refresh-interval}: re-probe a worker that answered this often even if nothing changed. */
    public WorkerResolver.Builder refreshInterval(Duration interval) {
        return put(CoreKeys.REFRESH_INTERVAL, interval);
    }

    /**
     * {@code rollcall.probe.keep-channels}: keep one idle connection per worker, so that a restart in
     * place is noticed at once; without, at the next refresh.
     */
    public WorkerResolver.Builder keepProbeChannels(boolean keep) {
        return put(CoreKeys.KEEP_CHANNELS, keep);
    }

    /**
     * {@code rollcall.probe.max-kept-channels}: at most {@code max} workers hold a kept probe channel
     * and its stream; the others are tracked as with {@code keepProbeChannels(false)} and counted in
     * {@code counts().overKeptCap()}. 0 is refused at {@code build()} unless channels are not kept.
     *
     * @throws IllegalArgumentException naming the key if {@code max} is negative
     */
    public WorkerResolver.Builder maxKeptChannels(int max) {
        return put(CoreKeys.MAX_KEPT_CHANNELS, max);
    }

    /**
     * {@code rollcall.subset.size}: use {@code size} of the workers the policy accepts, those of
     * highest rendezvous weight on the {@link #coordinatorId coordinator id}; the others are
     * {@code OUTSIDE_SUBSET}. Not with {@link #exactDrain}. See docs/subsets.md.
     *
     * @throws IllegalArgumentException naming the key if {@code size} is below 1
     */
    public WorkerResolver.Builder subsetSize(int size) {
        return put(CoreKeys.SUBSET_SIZE, size);
    }

    /**
     * {@code rollcall.subset.coordinator-id}: the id this coordinator's subset is chosen by; two
     * coordinators with one id use the same workers. Unused without {@link #subsetSize}.
     *
     * @throws IllegalArgumentException naming the key if {@code id} is blank
     */
    public WorkerResolver.Builder coordinatorId(String id) {
        return put(CoreKeys.COORDINATOR_ID, CoreKeys.COORDINATOR_ID.check(id, BuilderValues.ORIGIN).strip());
    }

    /**
     * {@code rollcall.probe.keepalive-time} and {@code rollcall.probe.keepalive-timeout}: how a worker
     * whose host goes silent (no FIN, no RST) is noticed over its kept connection. Each stream asks
     * its worker to repeat its answer after {@code time} without news; one silent for the grant (or
     * {@code time}, if longer) plus {@code timeout} takes the worker out at once (9 s with the
     * defaults). HTTP/2 pings follow {@code time} too, every 10 s at least. docs/configuration.md
     * gives the bounds per probe protocol.
     *
     * @throws IllegalArgumentException naming the key when {@code time} is below 1 s (workers grant no
     *                                  less) or {@code timeout} below 100 ms
     */
    public WorkerResolver.Builder keepalive(Duration time, Duration timeout) {
        CoreKeys.KEEPALIVE_TIME.check(time, BuilderValues.ORIGIN);
        CoreKeys.KEEPALIVE_TIMEOUT.check(timeout, BuilderValues.ORIGIN);
        given.put(CoreKeys.KEEPALIVE_TIME, time);
        return put(CoreKeys.KEEPALIVE_TIMEOUT, timeout);
    }

    /**
     * {@code rollcall.drain.exact}: hold the workers watched under {@link WorkerResolver#lease() leases}
     * and release each draining one when no open lease lists it. Only for code that takes every
     * snapshot it plans with through {@code lease()}; needs kept probe channels.
     */
    public WorkerResolver.Builder exactDrain(boolean exact) {
        return put(CoreKeys.EXACT_DRAIN, exact);
    }

    /** {@code rollcall.probe.max-response-bytes}: the largest {@code WorkerInfo} answer accepted. */
    public WorkerResolver.Builder maxResponseBytes(int bytes) {
        return put(CoreKeys.MAX_RESPONSE_BYTES, bytes);
    }

    /**
     * {@code rollcall.discovery.max-candidates}: the most candidates one set from discovery may list;
     * a larger set is refused whole, the last good one kept and discovery reported failing.
     */
    public WorkerResolver.Builder maxCandidates(int max) {
        return put(CoreKeys.MAX_CANDIDATES, max);
    }

    /**
     * {@code rollcall.probe.tls.ca}: the CA certificates (one PEM file) {@code grpcs://} workers must
     * chain to. TLS settings apply to {@code grpcs://} endpoints; {@code grpc://} ones stay plaintext,
     * and both may be mixed in one fleet. The files are read and checked once, at {@code build()}: a
     * missing, unreadable or non-PEM file fails naming its key and path, never its content. A worker
     * whose certificate is not trusted, does not name its address, or that refuses the client
     * certificate is unreachable, with the TLS failure as the reason (fail closed).
     */
    public WorkerResolver.Builder probeTrust(Path caPemFile) {
        return put(CoreKeys.TLS_CA, Objects.requireNonNull(caPemFile, "caPemFile").toString());
    }

    /**
     * {@code rollcall.probe.tls.cert} and {@code rollcall.probe.tls.key}: the client certificate
     * (PEM chain) and its PKCS#8 private key (PEM) for workers that require mutual TLS.
     */
    public WorkerResolver.Builder probeClientCertificate(Path certificateChainPemFile, Path privateKeyPemFile) {
        Objects.requireNonNull(certificateChainPemFile, "certificateChainPemFile");
        Objects.requireNonNull(privateKeyPemFile, "privateKeyPemFile");
        given.put(CoreKeys.TLS_CERT, certificateChainPemFile.toString());
        return put(CoreKeys.TLS_KEY, privateKeyPemFile.toString());
    }

    /** {@code rollcall.probe.tls.authority}: the name workers' certificates are checked against (and sent as SNI). */
    public WorkerResolver.Builder probeAuthority(String authority) {
        return put(CoreKeys.TLS_AUTHORITY, Objects.requireNonNull(authority, "authority"));
    }

    /** {@code rollcall.schemas.fetch}: fetch each worker version's schema through gRPC server reflection. */
    public WorkerResolver.Builder fetchSchemas(boolean fetch) {
        return put(CoreKeys.FETCH_SCHEMAS, fetch);
    }

    /**
     * {@code rollcall.selector}: only workers whose labels match {@code selector} (Kubernetes'
     * label-selector syntax) may be used, whatever the policy says.
     *
     * @throws IllegalArgumentException naming the position and what was expected there
     */
    public WorkerResolver.Builder selector(String selector) {
        LabelSelector.parse(Objects.requireNonNull(selector, "selector"));
        return put(CoreKeys.SELECTOR, selector);
    }

    /**
     * {@code rollcall.prefer-labels} and {@code rollcall.prefer-labels.min-workers}: snapshots list
     * only workers matching {@code selector} while at least {@code minWorkers} of them are compatible.
     *
     * @throws IllegalArgumentException naming the position and what was expected, or the key of a
     *                                  {@code minWorkers} below 1
     */
    public WorkerResolver.Builder preferLabels(String selector, int minWorkers) {
        CoreKeys.PREFER_MIN_WORKERS.check(minWorkers, BuilderValues.ORIGIN);
        LabelSelector.parse(Objects.requireNonNull(selector, "selector"));
        given.put(CoreKeys.PREFER_MIN_WORKERS, minWorkers);
        return put(CoreKeys.PREFER_LABELS, selector);
    }

    /** The routing key paths, instead of {@code rollcall.keys.*}. */
    public WorkerResolver.Builder keyPaths(KeyPaths keys) {
        this.keyPaths = Objects.requireNonNull(keys, "keys");
        return self();
    }

    /**
     * The time source of every timing rule: retries and their backoff, flap damping, refreshes,
     * publish spacing and {@code await} deadlines; default {@link Ticker#systemTicker()}. For
     * tests, together with {@link #scheduler}, as Caffeine's {@code ticker()} is.
     */
    public WorkerResolver.Builder ticker(Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        return self();
    }

    /**
     * Where the resolver's timers run; default its own thread, in real time. For tests that
     * advance a {@link #ticker} themselves: a scheduler that fires as they do.
     */
    public WorkerResolver.Builder scheduler(Scheduler scheduler) {
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        return self();
    }

    /** The clock for snapshot timestamps; default UTC system clock. */
    public WorkerResolver.Builder clock(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        return self();
    }

    /**
     * {@code rollcall.probe.protocol}: how workers are asked what they run ({@code rollcall},
     * {@code datafusion-distributed}, {@code grpc-health}, {@code none}, or a jar's; see
     * docs/probe-protocols.md). {@code build()} fails naming the value and the key, and listing the
     * protocols found, when no jar provides it.
     *
     * @throws IllegalArgumentException naming the key when {@code name} is blank
     */
    public WorkerResolver.Builder probeProtocol(String name) {
        return put(CoreKeys.PROBE_PROTOCOL, name);
    }

    /** A name for thread names and logs; default a number. */
    public WorkerResolver.Builder name(String name) {
        this.name = Objects.requireNonNull(name, "name");
        return self();
    }

    /** Where providers are looked up; default the thread's context class loader. */
    public WorkerResolver.Builder classLoader(ClassLoader loader) {
        this.classLoader = Objects.requireNonNull(loader, "classLoader");
        return self();
    }
}
