package dev.rollcall.core.internal.schema;

import dev.rollcall.api.Backoff;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.KeyPaths;
import dev.rollcall.api.registry.ProtoSchema;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.core.internal.ProbeFailures;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.settings.SchemaSettings;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schema of each worker version, fetched once per version through {@link SchemaFetcher}: the
 * first worker of a version that answers a probe is asked; every other worker of that version
 * waits for that one fetch. A worker is published once its version's schema is known
 * ({@link #ready}), so that a compatible worker never shows up without its schema. A server without
 * reflection ({@code UNIMPLEMENTED}) gives its version an empty schema, logged once. Any other
 * failure is retried with the probe backoff, from whichever worker of the version is current then;
 * after the first failure the version's workers are published without a schema rather than held
 * back, and the schema joins a later snapshot when a retry succeeds.
 *
 * <p>Confined to the resolver's serial context, like the tracker; fetch answers hop back
 * to it. Schemas of versions that no worker reports any longer are dropped.
 */
public final class VersionSchemas {

    private static final Logger log = LoggerFactory.getLogger(VersionSchemas.class);

    private final boolean enabled;
    private final SerialContext context;
    private final RandomGenerator jitter;
    private final ProbeClient probes;
    private final Duration timeout;
    private final int maxBytes;
    private final Backoff backoff;
    private final Runnable changed;
    private final KeyPaths keys;
    private final Map<String, Entry> byVersion = new HashMap<>();
    private final AtomicLong fetches = new AtomicLong();
    private Map<String, ProtoSchema> known = Map.of();
    private boolean closed;

    /** One version's schema and its fetch. */
    private static final class Entry {
        final String version;
        ProtoSchema schema;
        boolean fetching;
        int failures;
        SerialContext.Timer retry;
        boolean retryDue = true;
        ManagedChannel ownChannel;

        Entry(String version) {
            this.version = version;
        }
    }

    public VersionSchemas(SchemaSettings settings, SerialContext context, RandomGenerator jitter, ProbeClient probes,
                   Duration timeout, Backoff backoff, Runnable changed) {
        this.keys = settings.keys();
        this.enabled = settings.fetch();
        this.context = context;
        this.jitter = jitter;
        this.probes = probes;
        this.timeout = timeout;
        this.maxBytes = settings.maxResponseBytes();
        this.backoff = backoff;
        this.changed = changed;
    }

    /**
     * Whether workers of {@code version} may be published: its schema is known, its fetch has
     * failed at least once, or fetching is off. Starts a fetch from {@code worker} (over
     * {@code channel} when it is open, else over a channel of its own) when one is needed.
     */
    public boolean ready(String version, WorkerEndpoint worker, Supplier<ManagedChannel> channel) {
        if (!enabled || closed) {
            return true;
        }
        Entry e = byVersion.computeIfAbsent(version, Entry::new);
        if (e.schema == null && !e.fetching && e.retryDue) {
            start(e, worker, channel.get());
        }
        return e.schema != null || e.failures > 0;
    }

    /** What {@link #ready} would answer for {@code version} now, without starting a fetch (for assertions). */
    public boolean readyNow(String version) {
        if (!enabled || closed) {
            return true;
        }
        Entry e = byVersion.get(version);
        return e != null && (e.schema != null || e.failures > 0);
    }

    private void start(Entry e, WorkerEndpoint worker, ManagedChannel channel) {
        e.fetching = true;
        e.retryDue = false;
        ManagedChannel over = channel;
        if (over == null || over.isShutdown()) {
            over = probes.open(worker);
            e.ownChannel = over;
        }
        ManagedChannel own = e.ownChannel;
        ManagedChannel borrowed = own == null ? over : null;
        fetches.incrementAndGet();
        SchemaFetcher.fetch(over, timeout, maxBytes).whenComplete((schema, failure) -> {
            if (own != null) {
                own.shutdownNow();
            }
            context.execute(() -> done(e, worker, borrowed, schema, failure));
        });
    }

    private void done(Entry e, WorkerEndpoint worker, ManagedChannel borrowed, ProtoSchema schema,
                      Throwable failure) {
        e.fetching = false;
        e.ownChannel = null;
        if (closed || byVersion.get(e.version) != e) {
            return; // every worker of the version left meanwhile
        }
        if (failure != null && borrowed != null && borrowed.isShutdown()) {
            // The worker asked left (or dropped its connection) and its probe channel was closed:
            // not the version's failure. Ask another worker of the version at once.
            e.retryDue = true;
            changed.run();
            return;
        }
        if (failure == null) {
            e.schema = schema;
            log.debug("schema of version '{}' fetched from {}: {}", e.version, worker.url(), schema);
            for (String problem : keys.problems(schema)) {
                log.warn("version '{}': {}", e.version, problem);
            }
        } else if (SchemaFetcher.isUnimplemented(failure)) {
            e.schema = ProtoSchema.empty();
            log.info("version '{}' has no schema: worker {} serves no gRPC server reflection", e.version,
                    worker.url());
        } else {
            e.failures++;
            String reason = ProbeFailures.describe(failure, timeout);
            if (e.failures == 1) {
                log.warn("schema of version '{}' could not be fetched from {}: {}; publishing its workers without "
                        + "a schema and retrying with backoff", e.version, worker.url(), reason);
            } else {
                log.debug("schema of version '{}' still not fetched from {}: {}", e.version, worker.url(), reason);
            }
            e.retry = context.schedule(() -> {
                e.retry = null;
                e.retryDue = true;
                changed.run();
            }, backoff.delayNanos(e.failures, jitter));
        }
        rebuildKnown();
        changed.run();
    }

    /** Forgets the versions not in {@code current}. */
    public void retain(Set<String> current) {
        if (byVersion.keySet().retainAll(current)) {
            rebuildKnown();
        }
        // Entries removed keep their retry timers harmless: done() and the timer check identity.
    }

    private void rebuildKnown() {
        Map<String, ProtoSchema> m = new HashMap<>();
        byVersion.forEach((v, e) -> {
            if (e.schema != null) {
                m.put(v, e.schema);
            }
        });
        if (!m.equals(known)) {
            known = Map.copyOf(m);
        }
    }

    /** The schemas known, by version; the same object until one is added or dropped. */
    public Map<String, ProtoSchema> known() {
        return known;
    }

    /** How many fetches were started (each one reflection call). */
    long fetches() {
        return fetches.get();
    }

    /** Stops retries; returns the channels of fetches still running, shut down. */
    public List<ManagedChannel> close() {
        closed = true;
        List<ManagedChannel> channels = new ArrayList<>();
        for (Entry e : byVersion.values()) {
            if (e.retry != null) {
                e.retry.cancel();
            }
            if (e.ownChannel != null) {
                e.ownChannel.shutdownNow();
                channels.add(e.ownChannel);
            }
        }
        byVersion.clear();
        return channels;
    }
}
