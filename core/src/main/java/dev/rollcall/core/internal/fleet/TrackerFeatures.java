package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.internal.drain.ExactDrain;
import dev.rollcall.core.internal.snapshot.Subset;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What a resolver adds to its {@link FleetTracker}, given at construction, each a part that does
 * nothing when its feature is off ({@link #NONE}): schema fetching ({@code schemas}; its changes
 * must reach {@link FleetTracker#schemasChanged()}), exact drain ({@code rollcall.drain.exact}),
 * subsets ({@code rollcall.subset.*}) and the candidate cache file, started from when discovery
 * has not answered within {@code cacheMaxWait}. Immutable.
 */
public record TrackerFeatures(SchemaGate schemas, ExactDrain.Maker drains, Optional<Subset> subset,
                              Optional<CandidateCache> cache, Duration cacheMaxWait) {

    /** None of them: no schemas, no exact drain, no subsets, no cache file. */
    public static final TrackerFeatures NONE = new TrackerFeatures(SchemaGate.NONE, ExactDrain.Maker.OFF,
            Optional.empty(), Optional.empty(), Duration.ZERO);

    public TrackerFeatures {
        Objects.requireNonNull(schemas, "schemas");
        Objects.requireNonNull(drains, "drains");
        Objects.requireNonNull(subset, "subset");
        Objects.requireNonNull(cache, "cache");
        Objects.requireNonNull(cacheMaxWait, "cacheMaxWait");
    }

    /**
     * Whether the schema of {@code version}, which {@code worker} answered, is known (see
     * {@code VersionSchemas#ready}: fetched over {@code channel} when not). Serial context.
     */
    @FunctionalInterface
    public interface SchemaGate {
        /** No schemas fetched: every version is ready. */
        SchemaGate NONE = (version, worker, channel) -> true;

        boolean ready(String version, WorkerEndpoint worker, Supplier<ManagedChannel> channel);
    }
}
