package dev.rollcall.policy;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.TreeMap;
import org.semver4j.Semver;

/**
 * Uses one version cohort at a time during a rolling upgrade (type {@code rollout}): among the
 * workers whose version is in an npm range, the newest version that has enough workers, and never
 * two versions at once.
 *
 * <p><b>Cohorts.</b> Workers whose versions are equal as SemVer form one cohort: build metadata and a
 * leading {@code v} are ignored, so {@code 2.1.0}, {@code v2.1.0} and {@code 2.1.0+arm64} are one
 * cohort, named {@code 2.1.0}. Pre-releases are versions of their own ({@code 2.1.0-rc.1} comes
 * before {@code 2.1.0}). Workers outside the range (or that report no SemVer version) are rejected
 * with the same reason the {@code semver} policy gives and do not count anywhere.
 *
 * <p><b>Thresholds.</b> Let <i>allowed</i> be the number of workers in the range. A cohort
 * <i>qualifies</i> when it has at least {@code minWorkers} workers, or at least
 * {@code ceil(minFraction × allowed)} (at least one of the two is configured; with both, either
 * suffices).
 *
 * <p><b>Hysteresis.</b> The policy remembers the cohort it chose last (the <i>current</i> one):
 * <ul>
 *   <li>While the current cohort has at least {@code minWorkers} workers (with only
 *       {@code minFraction} configured: at least one worker), it is kept, unless a <em>newer</em>
 *       cohort qualifies: then the policy switches forward to the newest qualifying cohort.</li>
 *   <li>Once the current cohort has fewer, the policy chooses the newest qualifying cohort, older or
 *       newer (the current one again if it still qualifies).</li>
 *   <li>When no cohort qualifies, the selection is empty and every worker is rejected with the
 *       counts that fell short; the current cohort is forgotten.</li>
 * </ul>
 * An older cohort is therefore never chosen just because it has more workers, and a worker of the
 * current cohort that restarts (missing from one selection, back in the next) moves the choice only
 * if the current cohort drops below the floor meanwhile. With {@code minFraction} alone, the switch
 * happens at the fraction and the fall-back only when the current cohort has no worker left; with
 * {@code minWorkers}, a cohort is switched to and left at the same count, so a cohort that has
 * exactly {@code minWorkers} workers falls back when one of them goes.
 *
 * <p>{@link #select} returns the chosen version in {@link Selection#cohort()} and an account of the
 * choice in {@link Selection#explanation()}, e.g. {@code "2.1.0 has 6 of 10 allowed workers (needs 5);
 * switched from 2.0.0"} or {@code "kept 2.0.0: 7 of 10 allowed workers; 2.1.0 has 3 of 10, needs 5"}.
 * Workers in the range but not in the chosen cohort are rejected with
 * {@code "version '2.0.0' is not the chosen cohort 2.1.0 (rollout)"}.
 *
 * <p>{@link #check} answers only the per-worker part of the rule (is the worker in the range?); the
 * cohort is chosen by {@link #select}.
 *
 * <p>Threading: stateful. {@link #select} is meant to be called by one resolver, on its thread, one
 * call at a time (as {@link VersionPolicy} promises); it is not synchronised, so one instance must
 * not be shared by several resolvers. {@link #check} and the accessors may be called from any
 * thread. Neither throws for any worker.
 */
public final class RolloutPolicy implements VersionPolicy {

    private final SemverRangePolicy range;
    /** 0 when not configured. */
    private final int minWorkers;
    /** null when not configured. */
    private final BigDecimal minFraction;

    /** The cohort chosen last; only {@link #select} touches it, on the resolver's thread. */
    private Semver current;

    private RolloutPolicy(SemverRangePolicy range, int minWorkers, BigDecimal minFraction) {
        this.range = range;
        this.minWorkers = minWorkers;
        this.minFraction = minFraction == null ? null : minFraction.stripTrailingZeros();
    }

    /** A builder; {@code range} and at least one of {@code minWorkers} and {@code minFraction} are required. */
    public static Builder builder() {
        return new Builder();
    }

    /** For the provider, with arguments it has already checked. */
    static RolloutPolicy create(SemverRangePolicy range, int minWorkers, BigDecimal minFraction) {
        return new RolloutPolicy(range, minWorkers, minFraction);
    }

    /** The range as configured, with runs of white space collapsed. */
    public String range() {
        return range.range();
    }

    /** Whether pre-releases count as ordinary versions of the range. */
    public boolean includesPrerelease() {
        return range.includesPrerelease();
    }

    /** The number of workers that makes a cohort qualify, and below which the current one is left. */
    public OptionalInt minWorkers() {
        return minWorkers == 0 ? OptionalInt.empty() : OptionalInt.of(minWorkers);
    }

    /** The share of the workers in the range that makes a cohort qualify. */
    public OptionalDouble minFraction() {
        return minFraction == null ? OptionalDouble.empty() : OptionalDouble.of(minFraction.doubleValue());
    }

    /** Whether the worker is in the range; which cohort is used is decided by {@link #select}. */
    @Override
    public Verdict check(WorkerInfo worker) {
        return range.check(worker);
    }

    @Override
    public Selection select(List<WorkerInfo> probed) {
        String[] rangeReasons = new String[probed.size()];
        Semver[] versions = new Semver[probed.size()];
        NavigableMap<Semver, Integer> counts = new TreeMap<>();
        int allowed = 0;
        for (int i = 0; i < probed.size(); i++) {
            WorkerInfo worker = probed.get(i);
            Verdict verdict = range.check(worker);
            if (!verdict.accepted()) {
                rangeReasons[i] = verdict.reason();
                continue;
            }
            // In the range means strict SemVer, so this parses; build metadata does not split a cohort.
            versions[i] = Semver.parse(worker.version()).withClearedBuild();
            counts.merge(versions[i], 1, Integer::sum);
            allowed++;
        }

        Decision decision = decide(counts, allowed);
        current = decision.chosen();

        List<WorkerInfo> accepted = new ArrayList<>();
        List<Selection.Rejection> rejected = new ArrayList<>();
        for (int i = 0; i < probed.size(); i++) {
            WorkerInfo worker = probed.get(i);
            if (rangeReasons[i] != null) {
                rejected.add(new Selection.Rejection(worker, rangeReasons[i]));
            } else if (decision.chosen() == null) {
                rejected.add(new Selection.Rejection(worker, decision.rejection()));
            } else if (versions[i].compareTo(decision.chosen()) == 0) {
                accepted.add(worker);
            } else {
                rejected.add(new Selection.Rejection(worker, "version " + Printable.quote(worker.version())
                        + " is not the chosen cohort " + name(decision.chosen()) + " (rollout)"));
            }
        }
        Optional<String> cohort = Optional.ofNullable(decision.chosen()).map(RolloutPolicy::name);
        return new Selection(accepted, rejected, cohort, decision.explanation());
    }

    /**
     * The chosen cohort (null for none), the explanation for the selection, and the reason given to
     * every allowed worker when none is chosen.
     */
    private record Decision(Semver chosen, String explanation, String rejection) {
    }

    private Decision decide(NavigableMap<Semver, Integer> counts, int allowed) {
        Semver previous = current;
        Semver newest = null;
        for (Map.Entry<Semver, Integer> cohort : counts.descendingMap().entrySet()) {
            if (qualifies(cohort.getValue(), allowed)) {
                newest = cohort.getKey();
                break;
            }
        }
        int previousCount = previous == null ? 0 : counts.getOrDefault(previous, 0);
        if (previous != null && previousCount >= keepThreshold()) {
            if (newest != null && newest.compareTo(previous) > 0) {
                return chosen(newest, counts, allowed, "; switched from " + name(previous));
            }
            return kept(previous, counts, allowed);
        }
        if (newest == null) {
            String reason = none(counts, allowed);
            String dropped = previous == null ? "" : "; dropped " + name(previous);
            return new Decision(null, reason + dropped, reason);
        }
        if (previous == null) {
            return chosen(newest, counts, allowed, "");
        }
        int order = newest.compareTo(previous);
        if (order == 0) {
            return kept(previous, counts, allowed);
        }
        if (order > 0) {
            return chosen(newest, counts, allowed, "; switched from " + name(previous));
        }
        String left = previousCount == 0
                ? "which has no workers left"
                : "which has " + previousCount + " of " + allowed + " (fewer than min-workers " + minWorkers + ")";
        return chosen(newest, counts, allowed, "; fell back from " + name(previous) + ", " + left);
    }

    private Decision chosen(Semver cohort, Map<Semver, Integer> counts, int allowed, String suffix) {
        return new Decision(cohort, name(cohort) + " has " + counts.get(cohort) + " of " + allowed
                + " allowed workers (" + needs() + ")" + suffix, "");
    }

    private Decision kept(Semver cohort, NavigableMap<Semver, Integer> counts, int allowed) {
        int count = counts.get(cohort);
        StringBuilder text = new StringBuilder("kept ").append(name(cohort)).append(": ")
                .append(count).append(" of ").append(allowed).append(" allowed workers");
        if (!qualifies(count, allowed)) {
            text.append(" (stays while it has at least ").append(keepThreshold()).append(')');
        }
        for (Map.Entry<Semver, Integer> newer : counts.tailMap(cohort, false).entrySet()) {
            text.append("; ").append(name(newer.getKey())).append(" has ").append(newer.getValue())
                    .append(" of ").append(allowed).append(", ").append(needs());
        }
        return new Decision(cohort, text.toString(), "");
    }

    private String none(Map<Semver, Integer> counts, int allowed) {
        if (allowed == 0) {
            return "no worker is in " + range.range();
        }
        StringBuilder text = new StringBuilder("no cohort of ").append(range.range()).append(" qualifies: ");
        String separator = "";
        for (Map.Entry<Semver, Integer> cohort : counts.entrySet()) {
            text.append(separator).append(name(cohort.getKey())).append(" has ").append(cohort.getValue())
                    .append(" of ").append(allowed);
            separator = ", ";
        }
        return text.append(" (").append(needs()).append(')').toString();
    }

    private boolean qualifies(int count, int allowed) {
        return (minWorkers > 0 && count >= minWorkers)
                || (minFraction != null && count >= fractionOf(allowed));
    }

    /** {@code ceil(minFraction × allowed)}, exactly (no binary rounding), and at least 1. */
    private int fractionOf(int allowed) {
        int needed = minFraction.multiply(BigDecimal.valueOf(allowed)).setScale(0, RoundingMode.CEILING).intValueExact();
        return Math.max(1, needed);
    }

    /** The current cohort is kept while it has at least this many workers. */
    private int keepThreshold() {
        return minWorkers > 0 ? minWorkers : 1;
    }

    private String needs() {
        if (minFraction == null) {
            return "needs " + minWorkers;
        }
        String percent = minFraction.movePointRight(2).stripTrailingZeros().toPlainString() + "%";
        return minWorkers > 0 ? "needs " + minWorkers + " or " + percent : "needs " + percent;
    }

    private static String name(Semver cohort) {
        return cohort.getVersion();
    }

    @Override
    public String description() {
        List<String> details = new ArrayList<>(3);
        if (minWorkers > 0) {
            details.add("min-workers " + minWorkers);
        }
        if (minFraction != null) {
            details.add("min-fraction " + minFraction.toPlainString());
        }
        if (range.includesPrerelease()) {
            details.add("pre-releases included");
        }
        return "rollout " + range.range() + " (" + String.join(", ", details) + ")";
    }

    @Override
    public String toString() {
        return description();
    }

    /**
     * Builds a {@link RolloutPolicy}. Each setter checks its argument at once; {@link #build} checks
     * that the range and at least one threshold are set and that the range is valid. Not thread-safe.
     */
    public static final class Builder {

        private String range;
        private boolean includePrerelease;
        private int minWorkers;
        private BigDecimal minFraction;

        private Builder() {
        }

        /** Required: an npm range, as for {@link SemverRangePolicy#of(String)}; checked by {@link #build}. */
        public Builder range(String range) {
            this.range = Objects.requireNonNull(range, "range");
            return this;
        }

        /** Whether pre-releases count as ordinary versions of the range; default {@code false}. */
        public Builder includePrerelease(boolean includePrerelease) {
            this.includePrerelease = includePrerelease;
            return this;
        }

        /**
         * A cohort with at least this many workers qualifies, and the current cohort is kept while it
         * has this many.
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

        /**
         * A cohort with at least this share of the workers in the range (rounded up to a whole
         * worker) qualifies.
         *
         * @throws IllegalArgumentException unless {@code 0 < minFraction <= 1}
         */
        public Builder minFraction(double minFraction) {
            if (!(minFraction > 0 && minFraction <= 1)) {
                throw new IllegalArgumentException(
                        "minFraction must be greater than 0 and at most 1, not " + minFraction);
            }
            // valueOf keeps the decimal the caller wrote (0.6, not 0.59999999999999997779...).
            this.minFraction = BigDecimal.valueOf(minFraction);
            return this;
        }

        /**
         * The policy.
         *
         * @throws IllegalArgumentException when the range is missing or invalid (naming it and what is
         *                                  wrong), or when neither threshold is set
         */
        public RolloutPolicy build() {
            if (range == null) {
                throw new IllegalArgumentException("a rollout policy needs a range");
            }
            if (minWorkers == 0 && minFraction == null) {
                throw new IllegalArgumentException("a rollout policy needs minWorkers, minFraction or both");
            }
            return new RolloutPolicy(SemverRangePolicy.of(range, includePrerelease), minWorkers, minFraction);
        }
    }
}
