package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One consistent, immutable state of the fleet, implementing every read view
 * ({@link WorkerEndpoints}, {@link WorkerVersions}, {@link WorkerServices}, {@link InvocationTargets}):
 * all answer from the same data, computed once when the snapshot is built. A query pins one snapshot
 * and uses it throughout (sizing, planning, routing) so that it never mixes two states. A consumer
 * that needs one view takes that interface alone.
 *
 * <p>Snapshot 0 is the empty one from before discovery first reported; each published change adds
 * one, and a higher number always replaces a lower one. Thread-safe; no method blocks.
 */
public interface FleetSnapshot extends WorkerEndpoints, WorkerVersions, WorkerServices, InvocationTargets,
        ProtoSymbols, KeyExtractors, KeyRouting {

    /** This snapshot's number, increasing by one with each published change. */
    long number();

    /** When the resolver published it. */
    Instant publishedAt();

    /**
     * Since when discovery has been failing, if it is: the candidates are the last good set and
     * may be out of date. Empty while discovery is healthy.
     */
    Optional<Instant> staleSince();

    /** The compatible workers, ordered by URL. */
    List<WorkerInfo> workers();

    /** How the candidates split up. */
    FleetCounts counts();

    /** The policy's own description, e.g. {@code semver ^1.4.0}. */
    String policy();

    /** Why the compatible workers are these: the chosen cohort, the cohorts seen, who was left out and why. */
    SelectionReport selection();

    /**
     * A snapshot of the given statuses (any order; they are sorted by URL). Rollcall's resolver
     * builds its snapshots with it; users can build fixed ones to test their planners.
     *
     * @param staleSince since when discovery has been failing, or {@code null} while it is healthy
     */
    static FleetSnapshot of(long number, Instant publishedAt, Instant staleSince, String policy,
                            List<WorkerStatus> statuses) {
        return of(number, publishedAt, staleSince, policy, statuses, Optional.empty(), "");
    }

    /**
     * A snapshot of the given statuses, with the cohort a policy chose and its explanation (see
     * {@link dev.rollcall.api.policy.Selection}).
     */
    static FleetSnapshot of(long number, Instant publishedAt, Instant staleSince, String policy,
                            List<WorkerStatus> statuses, Optional<String> cohort, String explanation) {
        return of(number, publishedAt, staleSince, policy, statuses, cohort, explanation, Map.of(), KeyPaths.none());
    }

    /**
     * A snapshot with the schemas of its workers' versions (version → schema; schemas of versions no
     * answered worker reports are dropped) and the routing key paths that {@link KeyExtractors} reads.
     * A version without an entry has no known schema (not fetched yet, or fetching is off).
     */
    static FleetSnapshot of(long number, Instant publishedAt, Instant staleSince, String policy,
                            List<WorkerStatus> statuses, Optional<String> cohort, String explanation,
                            Map<String, ProtoSchema> schemasByVersion, KeyPaths keys) {
        return new ImmutableFleetSnapshot(number, publishedAt, staleSince, policy, statuses, cohort, explanation,
                java.util.Objects.requireNonNull(schemasByVersion, "schemasByVersion"),
                java.util.Objects.requireNonNull(keys, "keys"));
    }
}
