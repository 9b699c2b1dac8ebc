package dev.rollcall.worker;

import dev.rollcall.api.ServingState;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Locale;
import java.util.Objects;

/**
 * A worker's own meters in a Micrometer registry. Micrometer is an optional dependency of
 * {@code rollcall-worker}: without it on the class path nothing here is loaded and the worker runs
 * without meters. Bind once per worker, e.g. to the registry {@code OtlpMetrics.start} (in
 * {@code rollcall-core}) returns:
 *
 * <pre>{@code
 * new WorkerMetrics(worker).bindTo(meterRegistry);
 * }</pre>
 *
 * <p>Meters (no tag carries anything a peer sent, so their number is fixed):
 * <ul>
 *   <li>{@code rollcall.worker.state} (gauge, tag {@code state}: {@code serving}, {@code draining},
 *       {@code not_serving}) — 1 on the row of the state the worker says now, 0 on the others, so
 *       that an alert or a chart selects one row and a sum over {@code state} is 1;
 *   <li>{@code rollcall.worker.coordinators.watching} (gauge) — coordinators watching it now
 *       ({@code WatchWorkerInfo} streams), as {@link RollcallWorker#coordinatorsWatching()};
 *   <li>{@code rollcall.worker.coordinators.holding} (gauge) — coordinators holding it now (exact
 *       drain), as {@link RollcallWorker#coordinatorsHolding()};
 *   <li>{@code rollcall.worker.calls.in-flight} (gauge) — calls being served now (Arrow Flight and
 *       the user's services, not Rollcall's own), as {@link RollcallWorker#callsInFlight()}.
 * </ul>
 * Gauges read the worker when the registry asks; binding hooks nothing into the worker, so there is
 * nothing to unbind. The registry holds the worker weakly (Micrometer's default): the meters read
 * {@code NaN} once the worker is gone. Thread-safe.
 */
public final class WorkerMetrics implements MeterBinder {

    private final RollcallWorker worker;

    public WorkerMetrics(RollcallWorker worker) {
        this.worker = Objects.requireNonNull(worker, "worker");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        // One row per state rather than a single gauge holding an ordinal: OTLP and Prometheus readers
        // select rows by tag, and a number standing for a state means nothing on a chart.
        for (ServingState state : ServingState.values()) {
            Gauge.builder("rollcall.worker.state", worker, w -> w.state() == state ? 1 : 0)
                    .description("1 on the state the worker says now (serving, draining, not_serving), 0 on the others")
                    .tag("state", state.name().toLowerCase(Locale.ROOT)).register(registry);
        }
        Gauge.builder("rollcall.worker.coordinators.watching", worker, RollcallWorker::coordinatorsWatching)
                .description("coordinators watching this worker (WatchWorkerInfo streams)").register(registry);
        Gauge.builder("rollcall.worker.coordinators.holding", worker, RollcallWorker::coordinatorsHolding)
                .description("coordinators holding this worker (exact drain)").register(registry);
        Gauge.builder("rollcall.worker.calls.in-flight", worker, RollcallWorker::callsInFlight)
                .description("calls being served (Arrow Flight and the user's services, not Rollcall's own)")
                .register(registry);
    }
}
