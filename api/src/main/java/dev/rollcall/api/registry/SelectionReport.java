package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerInfo;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * How one snapshot's selection came about: the policy, the cohort it chose, the cohorts it saw,
 * and every candidate left out with its reason. Immutable; part of every {@link FleetSnapshot}.
 *
 * @param policy      the policy's description, e.g. {@code rollout ^2 (min-workers 3)}
 * @param cohort      the version chosen, when the policy chooses one cohort
 * @param explanation the policy's own account of its choice; {@code ""} when it gave none
 * @param cohorts     the workers that answered, counted by the version they report (accepted or not)
 * @param excluded    every candidate that is not compatible (rejected, unreachable, pending), with its
 *                    reason, ordered by URL
 * @param selector    the label selector every worker had to match before the policy saw it
 *                    ({@code rollcall.selector}), normalised; {@code ""} when none
 * @param preference  which label preference applied and why ({@code rollcall.prefer-labels}), e.g.
 *                    {@code "preferring zone=eu-1: 3 compatible (at least 2)"}; {@code ""} when none is configured
 */
public record SelectionReport(String policy, Optional<String> cohort, String explanation,
                              SortedMap<String, Integer> cohorts, List<WorkerStatus> excluded, String selector,
                              String preference) {

    public SelectionReport {
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(cohort, "cohort");
        Objects.requireNonNull(explanation, "explanation");
        Objects.requireNonNull(selector, "selector");
        Objects.requireNonNull(preference, "preference");
        cohorts = Collections.unmodifiableSortedMap(new TreeMap<>(cohorts));
        excluded = List.copyOf(excluded);
    }

    /** A report without a selector or a preference. */
    public SelectionReport(String policy, Optional<String> cohort, String explanation,
                           SortedMap<String, Integer> cohorts, List<WorkerStatus> excluded) {
        this(policy, cohort, explanation, cohorts, excluded, "", "");
    }

    /**
     * One line for logs and status output, e.g. {@code policy rollout ^2: chose 2.1.0 (6 of 10 ...);
     * cohorts 2.0.0 x4, 2.1.0 x6; excluded 4}.
     */
    public String summary() {
        StringBuilder sb = new StringBuilder("policy ").append(policy);
        cohort.ifPresent(c -> sb.append(": chose ").append(c.isEmpty() ? WorkerInfo.NO_VERSION : c));
        if (!explanation.isEmpty()) {
            sb.append(cohort.isPresent() ? " (" : ": ").append(explanation).append(cohort.isPresent() ? ")" : "");
        }
        sb.append("; cohorts ");
        if (cohorts.isEmpty()) {
            sb.append("none");
        } else {
            StringBuilder c = new StringBuilder();
            cohorts.forEach((v, n) -> c.append(c.length() == 0 ? "" : ", ").append(v.isEmpty() ? WorkerInfo.NO_VERSION : v)
                    .append(" x").append(n));
            sb.append(c);
        }
        if (!selector.isEmpty()) {
            sb.append("; selector ").append(selector);
        }
        if (!preference.isEmpty()) {
            sb.append("; ").append(preference);
        }
        sb.append("; excluded ").append(excluded.size());
        return sb.toString();
    }

    @Override
    public String toString() {
        return summary();
    }
}
