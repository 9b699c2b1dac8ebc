package dev.rollcall.policy;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Uses the workers of the first range, in an ordered list of npm ranges, that has workers (type
 * {@code prefer}): {@code ^2.1}, else {@code ^2.0}, else nothing. Every worker that matches the
 * chosen range is used; the rest are rejected with a reason that names the chosen range and the
 * ranges the worker does match.
 *
 * <p>A range "has workers" when at least {@code minWorkers} workers (default 1) match it. The choice
 * is made anew on every selection, without memory: the policy falls back to a later range as soon as
 * the earlier ones lose their workers, and returns to an earlier one as soon as it has them again.
 * For a choice that does not follow every worker that comes and goes, use {@link RolloutPolicy}.
 *
 * <p>Ranges are npm ranges, as for {@link SemverRangePolicy}, and are tried independently: a worker
 * may match several ({@code 2.1.3} matches both {@code ^2.1} and {@code ^2.0}, which means
 * {@code >=2.0.0 <3.0.0}). A range may mix versions; to use one version at a time use
 * {@link RolloutPolicy}. {@link Selection#cohort()} is therefore always empty; the chosen range is in
 * {@link Selection#explanation()}, e.g. {@code "^2.0 has 4 workers; ^2.1 has none"}.
 *
 * <p>{@link #check} answers only the per-worker part of the rule (does the worker match any of the
 * ranges?); which range is used is decided by {@link #select}.
 *
 * <p>Immutable and thread-safe; no method throws for any worker or blocks.
 */
public final class PreferPolicy implements VersionPolicy {

    /** Accepts every SemVer version: its rejections say why a version is no SemVer at all. */
    private static final SemverRangePolicy ANY_VERSION = SemverRangePolicy.create("*", true);

    private final List<SemverRangePolicy> ranges;
    /** The same ranges with pre-releases included, to explain why a pre-release was left out. */
    private final List<SemverRangePolicy> rangesWithPrereleases;
    private final int minWorkers;
    private final boolean includePrerelease;

    private PreferPolicy(List<SemverRangePolicy> ranges, int minWorkers, boolean includePrerelease) {
        if (ranges.isEmpty()) {
            throw new IllegalArgumentException("a prefer policy needs at least one range");
        }
        this.ranges = List.copyOf(ranges);
        this.rangesWithPrereleases = includePrerelease ? this.ranges
                : this.ranges.stream().map(r -> SemverRangePolicy.create(r.range(), true)).toList();
        this.minWorkers = minWorkers;
        this.includePrerelease = includePrerelease;
    }

    /**
     * A policy preferring the workers of each range over those of the ranges after it, using a range
     * as soon as one worker matches it; pre-releases excluded by npm's rule.
     *
     * @throws IllegalArgumentException when no range is given or one is invalid (naming it and what
     *                                  is wrong with it)
     */
    public static PreferPolicy of(String... ranges) {
        return builder().ranges(Arrays.asList(Objects.requireNonNull(ranges, "ranges").clone())).build();
    }

    /** A builder; {@code ranges} is required. */
    public static Builder builder() {
        return new Builder();
    }

    /** For the provider, with ranges it has already compiled. */
    static PreferPolicy create(List<SemverRangePolicy> ranges, int minWorkers, boolean includePrerelease) {
        return new PreferPolicy(ranges, minWorkers, includePrerelease);
    }

    /** The ranges, most preferred first, each with runs of white space collapsed. */
    public List<String> ranges() {
        return ranges.stream().map(SemverRangePolicy::range).toList();
    }

    /** How many workers must match a range for it to be used. */
    public int minWorkers() {
        return minWorkers;
    }

    /** Whether pre-releases count as ordinary versions of the ranges. */
    public boolean includesPrerelease() {
        return includePrerelease;
    }

    /** Whether the worker matches any of the ranges; which range is used is decided by {@link #select}. */
    @Override
    public Verdict check(WorkerInfo worker) {
        for (SemverRangePolicy range : ranges) {
            if (range.check(worker).accepted()) {
                return Verdict.accept();
            }
        }
        return Verdict.reject(matchesNone(worker));
    }

    @Override
    public Selection select(List<WorkerInfo> probed) {
        // matches[i][r]: worker i is in range r.
        boolean[][] matches = new boolean[probed.size()][ranges.size()];
        int[] counts = new int[ranges.size()];
        for (int i = 0; i < probed.size(); i++) {
            for (int r = 0; r < ranges.size(); r++) {
                matches[i][r] = ranges.get(r).check(probed.get(i)).accepted();
                if (matches[i][r]) {
                    counts[r]++;
                }
            }
        }
        int chosen = -1;
        for (int r = 0; r < ranges.size() && chosen < 0; r++) {
            if (counts[r] >= minWorkers) {
                chosen = r;
            }
        }
        String explanation = chosen < 0 ? noRange(counts) : chosenRange(chosen, counts);

        List<WorkerInfo> accepted = new ArrayList<>();
        List<Selection.Rejection> rejected = new ArrayList<>();
        for (int i = 0; i < probed.size(); i++) {
            WorkerInfo worker = probed.get(i);
            List<String> matched = new ArrayList<>();
            for (int r = 0; r < ranges.size(); r++) {
                if (matches[i][r]) {
                    matched.add(ranges.get(r).range());
                }
            }
            if (chosen >= 0 && matches[i][chosen]) {
                accepted.add(worker);
            } else if (matched.isEmpty()) {
                rejected.add(new Selection.Rejection(worker, matchesNone(worker)));
            } else if (chosen < 0) {
                rejected.add(new Selection.Rejection(worker, "prefer: " + explanation));
            } else {
                rejected.add(new Selection.Rejection(worker, "prefer chose " + ranges.get(chosen).range() + " ("
                        + workers(counts[chosen]) + "); version " + Printable.quote(worker.version())
                        + " matches only " + String.join(", ", matched)));
            }
        }
        return new Selection(accepted, rejected, Optional.empty(), explanation);
    }

    /** {@code "^2.0 has 4 workers; ^2.1 has 1, needs 2"}: the chosen range and why the earlier ones were not. */
    private String chosenRange(int chosen, int[] counts) {
        StringBuilder text = new StringBuilder(ranges.get(chosen).range()).append(" has ")
                .append(workers(counts[chosen]));
        if (minWorkers > 1) {
            text.append(" (needs ").append(minWorkers).append(')');
        }
        for (int r = 0; r < chosen; r++) {
            text.append("; ").append(ranges.get(r).range()).append(" has ").append(shortCount(counts[r]));
        }
        return text.toString();
    }

    /** {@code "no range has workers"} or {@code "no range has 2 workers: ^2.1 has 1, ^2.0 has none"}. */
    private String noRange(int[] counts) {
        if (minWorkers <= 1) {
            return "no worker matches " + String.join(", ", ranges());
        }
        StringBuilder text = new StringBuilder("no range has ").append(minWorkers).append(" workers: ");
        for (int r = 0; r < ranges.size(); r++) {
            text.append(r == 0 ? "" : ", ").append(ranges.get(r).range()).append(" has ")
                    .append(counts[r] == 0 ? "none" : Integer.toString(counts[r]));
        }
        return text.toString();
    }

    private String shortCount(int count) {
        if (count == 0) {
            return "none";
        }
        return count + ", needs " + minWorkers;
    }

    private static String workers(int count) {
        return count == 1 ? "1 worker" : count + " workers";
    }

    /** Why a worker matches no range: not SemVer at all, outside all of them, or a pre-release left out. */
    private String matchesNone(WorkerInfo worker) {
        if (worker.version().isEmpty()) {
            return Printable.NO_VERSION + " matches none of " + String.join(", ", ranges());
        }
        Verdict semver = ANY_VERSION.check(worker);
        if (!semver.accepted()) {
            return semver.reason();
        }
        if (ranges.size() == 1) {
            return ranges.get(0).check(worker).reason();
        }
        String reason = "version " + Printable.quote(worker.version()) + " matches none of "
                + String.join(", ", ranges());
        if (rangesWithPrereleases.stream().anyMatch(r -> r.check(worker).accepted())) {
            reason += " (it is a pre-release, and pre-releases are not included)";
        }
        return reason;
    }

    @Override
    public String description() {
        String details = (minWorkers > 1 ? "min-workers " + minWorkers : "")
                + (minWorkers > 1 && includePrerelease ? ", " : "")
                + (includePrerelease ? "pre-releases included" : "");
        return "prefer " + String.join(", ", ranges()) + (details.isEmpty() ? "" : " (" + details + ")");
    }

    @Override
    public String toString() {
        return description();
    }

    /**
     * Builds a {@link PreferPolicy}. Each setter checks its argument at once; {@link #build} checks
     * the ranges. Not thread-safe.
     */
    public static final class Builder {

        private List<String> ranges;
        private int minWorkers = 1;
        private boolean includePrerelease;

        private Builder() {
        }

        /**
         * Required: the ranges, most preferred first, each an npm range as for
         * {@link SemverRangePolicy#of(String)}; checked by {@link #build}.
         *
         * @throws NullPointerException when the list or a range is null
         */
        public Builder ranges(List<String> ranges) {
            this.ranges = List.copyOf(Objects.requireNonNull(ranges, "ranges"));
            return this;
        }

        /** Like {@link #ranges(List)}. */
        public Builder ranges(String... ranges) {
            return ranges(Arrays.asList(Objects.requireNonNull(ranges, "ranges").clone()));
        }

        /**
         * How many workers must match a range for it to be used; default 1.
         *
         * @throws IllegalArgumentException when {@code minWorkers < 1}
         */
        public Builder minWorkers(int minWorkers) {
            if (minWorkers < 1) {
                throw new IllegalArgumentException("minWorkers must be at least 1, not " + minWorkers);
            }
            this.minWorkers = minWorkers;
            return this;
        }

        /** Whether pre-releases count as ordinary versions of every range; default {@code false}. */
        public Builder includePrerelease(boolean includePrerelease) {
            this.includePrerelease = includePrerelease;
            return this;
        }

        /**
         * The policy.
         *
         * @throws IllegalArgumentException when no range is given or one is invalid (naming it and what
         *                                  is wrong with it)
         */
        public PreferPolicy build() {
            if (ranges == null || ranges.isEmpty()) {
                throw new IllegalArgumentException("a prefer policy needs at least one range");
            }
            List<SemverRangePolicy> compiled = new ArrayList<>(ranges.size());
            for (String range : ranges) {
                compiled.add(SemverRangePolicy.of(range, includePrerelease));
            }
            return new PreferPolicy(compiled, minWorkers, includePrerelease);
        }
    }
}
