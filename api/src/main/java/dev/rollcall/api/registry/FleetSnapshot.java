package dev.rollcall.api.registry;

import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One consistent, immutable state of the fleet, implementing every read view
 * ({@link WorkerEndpoints}, {@link WorkerVersions}, {@link WorkerServices}, {@link InvocationTargets},
 * {@link WorkerCapabilities}):
 * all answer from the same data, computed once when the snapshot is built. A query pins one snapshot
 * and uses it throughout (sizing, planning, routing) so that it never mixes two states. A consumer
 * that needs one view takes that interface alone.
 *
 * <p>Snapshot 0 is the empty one from before discovery first reported; each published change adds
 * one, and a higher number always replaces a lower one. Thread-safe; no method blocks.
 */
public interface FleetSnapshot extends WorkerEndpoints, WorkerVersions, WorkerServices, InvocationTargets,
        KeyRouting, WorkerCapabilities {

    /** This snapshot's number, increasing by one with each published change. */
    long number();

    /** When the resolver published it. */
    Instant publishedAt();

    /**
     * Since when discovery has been failing, if it is: the candidates are the last good set and
     * may be out of date. Empty while discovery is healthy.
     */
    Optional<Instant> staleSince();

    /**
     * Why discovery is failing, while it is: the cause of this outage's first failure, e.g.
     * {@code discovery has not answered since start-up: java.nio.file.NoSuchFileException: /etc/workers.txt}
     * or {@code discovery failing since 2026-11-30T10:00:00Z: ...}. Empty while discovery is healthy.
     */
    default Optional<String> discoveryProblem() {
        return Optional.empty();
    }

    /** The compatible workers, ordered by URL. */
    List<WorkerInfo> workers();

    /** How the candidates split up. */
    FleetCounts counts();

    /** The policy's own description, e.g. {@code semver ^1.4.0}. */
    String policy();

    /** Why the compatible workers are these: the chosen cohort, the cohorts seen, who was left out and why. */
    SelectionReport selection();

    /**
     * The protobuf view of this snapshot: the services, files and methods of its workers' version
     * schemas ({@link ProtoSymbols}). Its types are protobuf's, so it needs {@code protobuf-java}
     * (an optional dependency of this module, which every resolver user has through
     * {@code rollcall-core}); a snapshot used without it never loads protobuf.
     */
    ProtoSymbols symbols();

    /** Routing keys read from requests by the key paths of this snapshot (needs {@code protobuf-java}). */
    KeyExtractors keyExtractors();

    /**
     * This snapshot narrowed to one query's {@code requirements}: the same number, candidates and
     * policy, but only the compatible workers that meet them are compatible; every other compatible
     * worker is {@link WorkerStatus.State#LACKS_REQUIREMENT}, its reason naming the first requirement
     * it lacks. Every view answers from the narrowed set (workers, endpoints, services, targets,
     * routing), so a planner handed it needs no change. Narrowing a narrowed snapshot adds the new
     * requirements to its own; {@link Requirements#none()} gives this snapshot back. A lease taken
     * with requirements holds one of these ({@code WorkerResolver.lease(Requirements)}). It is a
     * view of this snapshot, not a copy: making one costs about what its workers cost (the capability
     * index), and every other answer is derived when first asked for.
     */
    FleetSnapshot requiring(Requirements requirements);

    /** The requirements this snapshot was narrowed to ({@link #requiring}); none for a published snapshot. */
    default Requirements requirements() {
        return Requirements.none();
    }

    /**
     * A builder of a snapshot, for users' tests of their planners and for the resolver: everything
     * but the statuses has a default (published now, not stale, policy {@code "fixed"}, no cohort,
     * no schemas, no key paths).
     *
     * <pre>{@code
     * FleetSnapshot snapshot = FleetSnapshot.builder(1)
     *         .status(new WorkerStatus(endpoint, State.COMPATIBLE, "", Optional.of(info)))
     *         .build();
     * }</pre>
     */
    static Builder builder(long number) {
        return new Builder(number);
    }

    /**
     * Collects a snapshot's parts; {@link #build()} checks them and sorts the statuses by URL. Not
     * thread-safe; each {@link #build()} makes a new immutable snapshot.
     */
    final class Builder {
        private final long number;
        private Instant publishedAt;
        private Instant staleSince;
        private String policy = "fixed";
        private final ArrayList<WorkerStatus> statuses = new ArrayList<>();
        private Optional<String> cohort = Optional.empty();
        private String explanation = "";
        private Map<String, ProtoSchema> schemasByVersion = Map.of();
        private KeyPaths keys = KeyPaths.none();
        private String selector = "";
        private String preference = "";
        private String discoveryProblem;
        private int overKeptCap;
        private Requirements requirements = Requirements.none();

        private Builder(long number) {
            if (number < 0) {
                throw new IllegalArgumentException("snapshot number " + number + " is negative");
            }
            this.number = number;
        }

        /** When it was published; default the moment {@link #build()} runs. */
        public Builder publishedAt(Instant at) {
            this.publishedAt = Objects.requireNonNull(at, "publishedAt");
            return this;
        }

        /** Since when discovery has been failing; {@code null} (the default) while it is healthy. */
        public Builder staleSince(Instant since) {
            this.staleSince = since;
            return this;
        }

        /** The policy's description, e.g. {@code semver ^1.4.0}; default {@code "fixed"}. */
        public Builder policy(String description) {
            this.policy = Objects.requireNonNull(description, "policy");
            return this;
        }

        /** Adds one candidate's status. */
        public Builder status(WorkerStatus status) {
            statuses.add(Objects.requireNonNull(status, "status"));
            return this;
        }

        /** Adds candidates' statuses, in any order. */
        public Builder statuses(Collection<WorkerStatus> all) {
            // One copy, checked as an array: a resolver hands every status of the fleet on each build,
            // and walking them through the collection's iterator, then copying them twice more, would
            // cost more than the build's own work.
            WorkerStatus[] given = all.toArray(new WorkerStatus[0]);
            checkStatuses(given);
            statuses.addAll(Arrays.asList(given));
            return this;
        }

        private static void checkStatuses(WorkerStatus[] given) {
            for (WorkerStatus status : given) {
                Objects.requireNonNull(status, "status");
            }
        }

        /** The cohort a policy chose and its explanation (see {@link dev.rollcall.api.policy.Selection}). */
        public Builder selection(Optional<String> chosenCohort, String why) {
            this.cohort = Objects.requireNonNull(chosenCohort, "cohort");
            this.explanation = Objects.requireNonNull(why, "explanation");
            return this;
        }

        /**
         * The schemas of the workers' versions (version → schema; schemas of versions no answered
         * worker reports are dropped). A version without an entry has no known schema.
         */
        public Builder schemas(Map<String, ProtoSchema> byVersion) {
            this.schemasByVersion = Objects.requireNonNull(byVersion, "schemasByVersion");
            return this;
        }

        /** The routing key paths that {@link KeyExtractors} reads. */
        public Builder keyPaths(KeyPaths paths) {
            this.keys = Objects.requireNonNull(paths, "keys");
            return this;
        }

        /** The label selector in use ({@code rollcall.selector}); default {@code ""}, none. */
        public Builder selector(String text) {
            this.selector = Objects.requireNonNull(text, "selector");
            return this;
        }

        /**
         * Which label preference applied and why ({@code rollcall.prefer-labels}); default
         * {@code ""}, none configured.
         */
        public Builder preference(String applied) {
            this.preference = Objects.requireNonNull(applied, "preference");
            return this;
        }

        /** Why discovery is failing ({@link FleetSnapshot#discoveryProblem()}); {@code null}, the default, while it is not. */
        public Builder discoveryProblem(String problem) {
            this.discoveryProblem = problem;
            return this;
        }

        /**
         * How many candidates are tracked without a kept probe channel because of
         * {@code rollcall.probe.max-kept-channels} ({@link FleetCounts#overKeptCap()}); default 0.
         *
         * @throws IllegalArgumentException if {@code workers} is negative
         */
        public Builder overKeptCap(int workers) {
            if (workers < 0) {
                throw new IllegalArgumentException("overKeptCap " + workers + " is negative");
            }
            this.overKeptCap = workers;
            return this;
        }

        /**
         * The requirements the snapshot is narrowed to ({@link FleetSnapshot#requirements()}); default
         * none. The statuses are taken as given: a builder does not narrow them.
         */
        public Builder requirements(Requirements narrowedTo) {
            this.requirements = Objects.requireNonNull(narrowedTo, "requirements");
            return this;
        }

        /** The snapshot; the builder may be used again. */
        public FleetSnapshot build() {
            return build(null);
        }

        /**
         * The snapshot, made knowing the one it follows ({@code previous}, or {@code null}): statuses
         * that are {@code previous}'s own objects, in its order, are not read again, so a resolver
         * publishing after 100 of 10,000 candidates changed reads 100 statuses. The same result as
         * {@link #build()}. Not API: reached through {@link InternalSnapshots} by the resolver.
         */
        FleetSnapshot build(FleetSnapshot previous) {
            return build(statuses.toArray(new WorkerStatus[0]), previous);
        }

        /**
         * As {@link #build(FleetSnapshot)}, with the statuses {@code owned} instead of the ones added
         * (there must be none): the array is the snapshot's from now on, not copied, and must not be
         * changed by anyone. Not API: reached through {@link InternalSnapshots} by the resolver.
         */
        FleetSnapshot build(WorkerStatus[] owned, FleetSnapshot previous) {
            return new ImmutableFleetSnapshot(number, publishedAt != null ? publishedAt : Instant.now(), staleSince,
                    policy, owned, cohort, explanation, schemasByVersion, keys, selector, preference,
                    discoveryProblem, overKeptCap, requirements, previous);
        }

        /** {@link #build(WorkerStatus[], FleetSnapshot)}'s checks: no statuses added, none null. */
        FleetSnapshot buildOwned(WorkerStatus[] owned, FleetSnapshot previous) {
            if (!statuses.isEmpty()) {
                throw new IllegalStateException("statuses were added to this builder; hand them over or add them, not both");
            }
            checkStatuses(owned);
            return build(owned, previous);
        }
    }
}
