package dev.rollcall.api.policy;

import dev.rollcall.api.WorkerInfo;
import java.util.ArrayList;
import java.util.List;

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
 * <p>A policy that only implements {@code check} is a rule about one worker: {@code check} must
 * answer from the {@link WorkerInfo} alone, the same way each time. The resolver relies on that: it
 * asks once per answer and keeps the verdict until that worker's answer changes (at 10,000 workers,
 * asking again on every snapshot cost more than building it). A policy whose verdicts depend on
 * anything else (the other workers, time, its own state) overrides {@code select}, which is called
 * with every answered worker on each change.
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
    default String description() {
        return getClass().getSimpleName();
    }
}
