package dev.rollcall.policy;

import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Keeps every worker that offers a baseline of capabilities (type {@code capabilities}): what no
 * query of this coordinator may run without, such as the plan protocol it speaks
 * ({@code plan-protocol>=3}). A worker that lacks it is rejected with the requirement it lacks,
 * e.g. {@code lacks plan-protocol>=3 (has plan-protocol=2)}. What one query needs beyond that (a
 * UDF) is that query's own {@link Requirements}, not the fleet's.
 *
 * <p>The baseline may stand alone (any version, including none, is kept) or guard another policy:
 * workers that lack it are rejected first, and the other policy chooses among the rest, so a
 * {@code rollout} policy counts its cohorts' quorums among the workers that meet the baseline only.
 *
 * <p>Thread-safe when the policy it guards is; per worker when that one is. {@link #check} and
 * {@link #select} throw only what the guarded policy throws.
 */
public final class CapabilitiesPolicy implements VersionPolicy {

    private final Requirements baseline;
    private final VersionPolicy within; // null: any version

    private CapabilitiesPolicy(Requirements baseline, VersionPolicy within) {
        this.baseline = baseline;
        this.within = within;
    }

    /**
     * Keeps every worker that meets {@code baseline}, whatever its version.
     *
     * @throws IllegalArgumentException when {@code baseline} is empty (it would keep every worker)
     */
    public static CapabilitiesPolicy of(Requirements baseline) {
        return new CapabilitiesPolicy(checked(baseline), null);
    }

    /**
     * Keeps the workers that meet {@code baseline} and that {@code within} then chooses among them.
     *
     * @throws IllegalArgumentException when {@code baseline} is empty
     */
    public static CapabilitiesPolicy of(Requirements baseline, VersionPolicy within) {
        return new CapabilitiesPolicy(checked(baseline), Objects.requireNonNull(within, "within"));
    }

    private static Requirements checked(Requirements baseline) {
        Objects.requireNonNull(baseline, "baseline");
        if (baseline.isEmpty()) {
            throw new IllegalArgumentException("a capabilities policy needs a baseline of at least one requirement");
        }
        return baseline;
    }

    /** What every worker kept must offer. */
    public Requirements baseline() {
        return baseline;
    }

    /** The policy that chooses among the workers meeting the baseline; empty when any version will do. */
    public Optional<VersionPolicy> within() {
        return Optional.ofNullable(within);
    }

    @Override
    public Verdict check(WorkerInfo worker) {
        Optional<String> lacks = baseline.whyNotMetBy(worker.capabilities());
        if (lacks.isPresent()) {
            return Verdict.reject(lacks.get());
        }
        return within == null ? Verdict.accept() : within.check(worker);
    }

    @Override
    public Selection select(List<WorkerInfo> probed) {
        if (perWorker()) {
            return VersionPolicy.super.select(probed);
        }
        List<WorkerInfo> meeting = new ArrayList<>(probed.size());
        List<Selection.Rejection> lacking = new ArrayList<>();
        for (WorkerInfo worker : probed) {
            Optional<String> lacks = baseline.whyNotMetBy(worker.capabilities());
            if (lacks.isPresent()) {
                lacking.add(new Selection.Rejection(worker, lacks.get()));
            } else {
                meeting.add(worker);
            }
        }
        Selection chosen = within.select(meeting);
        List<Selection.Rejection> rejected = new ArrayList<>(chosen.rejected());
        rejected.addAll(lacking);
        return new Selection(chosen.accepted(), rejected, chosen.cohort(), chosen.explanation());
    }

    /** As the guarded policy: the baseline is a rule about one worker's own answer. */
    @Override
    public boolean perWorker() {
        return within == null || within.perWorker();
    }

    /** E.g. {@code capabilities plan-protocol>=3} or {@code capabilities plan-protocol>=3 within semver ^1.4}. */
    @Override
    public String description() {
        return "capabilities " + baseline + (within == null ? "" : " within " + within.description());
    }

    @Override
    public String toString() {
        return description();
    }
}
