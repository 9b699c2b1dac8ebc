package dev.rollcall.example.policy;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A user's own policy, written against {@code rollcall-api} alone: use only the workers on the
 * version most of the fleet runs (the newest such version on a tie), and only once at least
 * {@code min-workers} run it. It looks at the whole cohort, so it overrides
 * {@link #select(List)}.
 *
 * <p>Stateless and thread-safe; called on the resolver's thread.
 */
public final class MajorityVersionPolicy implements VersionPolicy {

    private final int minWorkers;

    public MajorityVersionPolicy(int minWorkers) {
        this.minWorkers = minWorkers;
    }

    @Override
    public Verdict check(WorkerInfo worker) {
        // Alone, any worker is its own majority; the cohort rule is in select().
        return Verdict.accept();
    }

    @Override
    public Selection select(List<WorkerInfo> probed) {
        Map<String, Integer> counts = new TreeMap<>();
        probed.forEach(w -> counts.merge(w.version(), 1, Integer::sum));
        String majority = counts.entrySet().stream()
                .max(Map.Entry.<String, Integer>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                .map(Map.Entry::getKey)
                .orElse(null);
        int size = majority == null ? 0 : counts.get(majority);
        List<WorkerInfo> accepted = new ArrayList<>();
        List<Selection.Rejection> rejected = new ArrayList<>();
        for (WorkerInfo w : probed) {
            if (size < minWorkers) {
                rejected.add(new Selection.Rejection(w, "no version has " + minWorkers + " workers yet " + counts));
            } else if (w.version().equals(majority)) {
                accepted.add(w);
            } else {
                rejected.add(new Selection.Rejection(w,
                        "version '" + w.version() + "' is not the majority version '" + majority + "' " + counts));
            }
        }
        accepted.sort(Comparator.comparing(w -> w.endpoint().url()));
        return new Selection(accepted, rejected);
    }

    @Override
    public String description() {
        return "majority (min-workers " + minWorkers + ")";
    }
}
