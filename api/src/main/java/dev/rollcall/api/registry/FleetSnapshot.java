package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One consistent, immutable state of the fleet: every view answers from the same data. A query
 * pins one snapshot and uses it throughout (sizing, planning, routing) so that it never mixes two
 * states.
 *
 * <p>Snapshot 0 is the empty one from before discovery first reported; each published change adds
 * one, and a higher number always replaces a lower one. Thread-safe; no method blocks.
 */
public interface FleetSnapshot extends WorkerEndpoints, WorkerVersions {

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
}
