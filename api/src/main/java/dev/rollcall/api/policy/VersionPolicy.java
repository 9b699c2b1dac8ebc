package dev.rollcall.api.policy;

import dev.rollcall.api.WorkerInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Decides which probed workers a coordinator may use together.
 *
 * <p>Most policies are a per-worker rule: implement {@link #check}. A policy that must look at the
 * whole cohort ("the newest version that already has a quorum") overrides {@link #select} too.
 *
 * <p>Threading: called on the resolver's single thread, one call at a time; must be fast and must
 * not block. A policy may keep state between calls (hysteresis) without synchronisation. An
 * exception thrown by {@code check} rejects that worker with the exception as its reason; one
 * thrown by {@code select} rejects every worker (Rollcall fails closed).
 *
 * <p>A policy says whether it judges each worker alone ({@link #perWorker()}). One that does keeps
 * {@code select}'s default, and its {@code check} answers from the {@link WorkerInfo} alone, the same
 * way each time: the resolver then asks once per answer and keeps the verdict until that worker's
 * answer changes (asking again on every snapshot would cost a check per worker per build, more
 * than the build itself).
 * Any other policy (its verdicts depend on the other workers, time or its own state) leaves
 * {@code perWorker()} false; its {@code select} is called with every answered worker on each change.
 * A policy that declares nothing is taken as such: correct whatever it does, only slower if it
 * could have said {@code true}.
 */
public interface VersionPolicy {

    /** Accepts or rejects one worker, by what it reported about itself. */
    Verdict check(WorkerInfo worker);

    /**
     * Chooses among all workers that answered a probe. The default applies {@link #check} to each.
     *
     * @param probed every worker that answered, in a stable order (by endpoint URL)
     */
    default Selection select(List<WorkerInfo> probed) {
        List<WorkerInfo> accepted = new ArrayList<>();
        List<Selection.Rejection> rejected = new ArrayList<>();
        for (WorkerInfo worker : probed) {
            Verdict verdict;
            try {
                verdict = check(worker);
                if (verdict == null) {
                    verdict = Verdict.reject("policy returned no verdict");
                }
            } catch (RuntimeException e) {
                verdict = Verdict.reject("policy failed: " + e);
            }
            if (verdict.accepted()) {
                accepted.add(worker);
            } else {
                rejected.add(new Selection.Rejection(worker, verdict.reason()));
            }
        }
        return new Selection(accepted, rejected);
    }

    /** What this policy accepts, for logs and status output, e.g. {@code semver ^1.4.0}. */
    /**
     * Whether this policy is a rule about one worker at a time: {@link #select} is the default and
     * {@link #check} depends on its argument alone. Only then may the resolver remember verdicts
     * per answer. The default, {@code false}, is always correct; override it to return {@code true}
     * only when both hold (the stock {@code exact} and {@code semver} policies do).
     */
    default boolean perWorker() {
        return false;
    }

    /**
     * A policy that is {@code check} and declares itself {@link #perWorker() per worker}: for a
     * lambda, which cannot override {@code perWorker()}. {@code check} must answer from the
     * {@link WorkerInfo} alone, the same way each time.
     */
    static VersionPolicy rule(Function<WorkerInfo, Verdict> check) {
        Objects.requireNonNull(check, "check");
        return new VersionPolicy() {
            @Override
            public Verdict check(WorkerInfo worker) {
                return check.apply(worker);
            }

            @Override
            public boolean perWorker() {
                return true;
            }

            @Override
            public String description() {
                return "per-worker rule";
            }
        };
    }

    default String description() {
        return getClass().getSimpleName();
    }
}
