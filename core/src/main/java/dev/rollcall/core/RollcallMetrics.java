package dev.rollcall.core;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetCounts;
import dev.rollcall.api.registry.FleetEvent;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.SortedMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;

/**
 * A resolver's metrics in a Micrometer registry. Micrometer is an optional dependency of
 * {@code rollcall-core}: without it on the classpath nothing here is loaded and the resolver runs
 * without metrics. Bind once per resolver:
 *
 * <pre>{@code
 * new RollcallMetrics(resolver).bindTo(meterRegistry);
 * }</pre>
 *
 * <p>Meters, each tagged {@code resolver=<name>}:
 * <ul>
 *   <li>{@code rollcall.workers} (gauge, tag {@code state}: {@code compatible}, {@code rejected} (by
 *       version), {@code unreachable}, {@code pending}, {@code draining}, {@code not_serving},
 *       {@code outside_subset}) — from the current snapshot. The states partition the candidates: each
 *       worker is in exactly one, so a read summed over {@code state} is the number of candidates;
 *   <li>{@code rollcall.workers.versions} (gauge, tag {@code version}) — the workers that answered,
 *       by the version they report, compatible or not (how far a rolling upgrade has come); a
 *       worker without a version counts as {@code (no version)}, a version's text is escaped as
 *       {@link PeerText} does (a worker sent it), and a version nobody reports any more leaves;
 *   <li>{@code rollcall.snapshot.number} (gauge) — the current snapshot's number;
 *   <li>{@code rollcall.discovery.staleness} (gauge, seconds) — how long discovery has been failing,
 *       0 while it is healthy;
 *   <li>{@code rollcall.probes.sent}, {@code rollcall.probes.failed} (function counters);
 *   <li>{@code rollcall.probe.latency} (timer, tag {@code outcome}: {@code answered}, {@code failed});
 *   <li>{@code rollcall.probe.kept-channels} (gauge) — workers holding a kept probe channel (and its
 *       stream) now, at most {@code rollcall.probe.max-kept-channels};
 *   <li>{@code rollcall.probe.over-kept-cap} (gauge) — workers tracked without a kept channel because
 *       that cap was reached (the current snapshot's {@code counts().overKeptCap()});
 *   <li>{@code rollcall.version.claims.differed} (counter) — workers that answered another version
 *       than discovery claims, one per {@link FleetEvent.VersionClaimDiffers} (the answer wins);
 *   <li>{@code rollcall.workers.damped} (counter) — workers damped for flapping (held out of new
 *       snapshots because their verdict or version changed too often), one per
 *       {@link FleetEvent.WorkerDamped}: once per hold, never per answer.
 * </ul>
 * With a protocol that sends no probes ({@code none}) the probe counters stay at 0.
 * Gauges read the current snapshot when the registry asks (one volatile read each). Thread-safe.
 *
 * <p>Each {@link #bindTo} hooks the probe timer and the event counters into the resolver;
 * {@link #close()} unhooks every binding of this instance (a host that binds a resolver again and
 * again, as each start of a fleet server does, would otherwise leave one hook per start on the
 * resolver). The meters stay in their registries until the registry drops them.
 */
public final class RollcallMetrics implements MeterBinder, AutoCloseable {

    private final WorkerResolver resolver;
    /** What {@link #close()} runs: one unhooking per hook that {@link #bindTo} added. */
    private final List<Runnable> unhooks = new CopyOnWriteArrayList<>();

    public RollcallMetrics(WorkerResolver resolver) {
        this.resolver = Objects.requireNonNull(resolver, "resolver");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Tags tags = Tags.of("resolver", resolver.name());
        // No "candidate" total beside the states: it would count every worker twice in any sum over state.
        workers(registry, tags, "compatible", FleetCounts::compatible);
        workers(registry, tags, "rejected", FleetCounts::rejected);
        workers(registry, tags, "unreachable", FleetCounts::unreachable);
        workers(registry, tags, "pending", FleetCounts::pending);
        workers(registry, tags, "draining", FleetCounts::draining);
        workers(registry, tags, "not_serving", FleetCounts::notServing);
        workers(registry, tags, "outside_subset", FleetCounts::outsideSubset);
        versions(registry, tags);
        Gauge.builder("rollcall.snapshot.number", resolver, r -> r.pin().number())
                .description("the number of the current snapshot").tags(tags).register(registry);
        Gauge.builder("rollcall.discovery.staleness", resolver, RollcallMetrics::staleSeconds)
                .description("how long discovery has been failing (0 while healthy)")
                .baseUnit("seconds").tags(tags).register(registry);
        FunctionCounter.builder("rollcall.probes.sent", resolver, WorkerResolver::probesSent)
                .description("WorkerInfo probes sent").tags(tags).register(registry);
        FunctionCounter.builder("rollcall.probes.failed", resolver, WorkerResolver::probesFailed)
                .description("WorkerInfo probes that failed (refused, timed out, bad answer)").tags(tags)
                .register(registry);
        Gauge.builder("rollcall.probe.kept-channels", resolver, r -> r.probes().keptChannels())
                .description("workers holding a kept probe channel and its stream").tags(tags).register(registry);
        Gauge.builder("rollcall.probe.over-kept-cap", resolver, r -> r.pin().counts().overKeptCap())
                .description("workers tracked without a kept probe channel because rollcall.probe.max-kept-channels"
                        + " was reached").tags(tags).register(registry);
        Timer answered = Timer.builder("rollcall.probe.latency").description("WorkerInfo probe round trip")
                .tags(tags).tag("outcome", "answered").register(registry);
        Timer failed = Timer.builder("rollcall.probe.latency").description("WorkerInfo probe round trip")
                .tags(tags).tag("outcome", "failed").register(registry);
        unhooks.add(resolver.probes().addObserver((nanos, ok) ->
                (ok ? answered : failed).record(nanos, TimeUnit.NANOSECONDS)));
        Counter differed = Counter.builder("rollcall.version.claims.differed")
                .description("workers that answered another version than discovery claims (the answer wins)")
                .tags(tags).register(registry);
        Counter damped = Counter.builder("rollcall.workers.damped")
                .description("workers damped for flapping: held out of new snapshots because their verdict or"
                        + " version changed too often").tags(tags).register(registry);
        SnapshotListener.Registration events = resolver.addEventListener(event -> {
            if (event instanceof FleetEvent.VersionClaimDiffers) {
                differed.increment();
            } else if (event instanceof FleetEvent.WorkerDamped) {
                damped.increment();
            }
        });
        unhooks.add(events::close);
    }

    /** Unhooks every binding of this instance from the resolver: the timer and counters stop counting. Idempotent. */
    @Override
    public void close() {
        for (Runnable unhook : unhooks) {
            if (unhooks.remove(unhook)) {
                unhook.run();
            }
        }
    }

    private void workers(MeterRegistry registry, Tags tags, String state, ToIntFunction<FleetCounts> count) {
        Gauge.builder("rollcall.workers", resolver, r -> count.applyAsInt(r.pin().counts()))
                .description("candidate workers by state, in the current snapshot")
                .tags(tags).tag("state", state).register(registry);
    }

    /** One row per reported version, replaced at each snapshot (rows of versions gone are removed). */
    private void versions(MeterRegistry registry, Tags tags) {
        MultiGauge versions = MultiGauge.builder("rollcall.workers.versions")
                .description("workers that answered, by the version they report (compatible or not)")
                .tags(tags).register(registry);
        versions.register(rows(resolver.pin().versionHistogram()), true);
        SnapshotListener.Registration snapshots = resolver.addListener(
                snapshot -> versions.register(rows(snapshot.versionHistogram()), true));
        unhooks.add(snapshots::close);
    }

    private static List<MultiGauge.Row<?>> rows(SortedMap<String, Integer> histogram) {
        return histogram.entrySet().stream()
                .<MultiGauge.Row<?>>map(e -> MultiGauge.Row.of(Tags.of("version", e.getKey().isEmpty()
                        ? WorkerInfo.NO_VERSION : PeerText.escape(e.getKey(), 256)), e.getValue()))
                .toList();
    }

    private static double staleSeconds(WorkerResolver r) {
        return r.pin().staleSince().map(since -> Duration.between(since, Instant.now()).toMillis() / 1000.0)
                .orElse(0.0);
    }
}
