package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.labels.LabelSelector;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.core.internal.settings.LabelSettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the policy and the label rules make of the answered workers as a whole, for
 * {@link SnapshotBuilder}: the selector first (a custom policy never has to know about labels), then
 * the policy, then the label preference. Verdicts of per-worker rules and of the selector are
 * remembered per answer, so that a build asks again only about answers it has not seen.
 *
 * <p>Confined to the resolver's serial context.
 */
final class PolicyChoice {

    private static final Logger log = LoggerFactory.getLogger(PolicyChoice.class);
    private static final Verdict NO_VERDICT = Verdict.reject("policy returned no verdict");

    private final VersionPolicy policy;
    /** Whether the policy is a per-worker rule (keeps {@link VersionPolicy}'s own select): see {@link #checkEach}. */
    private final boolean perWorkerPolicy;
    private final LabelSelector selector;
    private final LabelPreference preference;  // null when none is configured
    private final LongSupplier ticker;
    private Map<WorkerInfo, Verdict> checked = new IdentityHashMap<>();
    /** The selector's verdict per answer ("" when it matches), remembered like {@link #checked}. */
    private Map<WorkerInfo, String> selected = new IdentityHashMap<>();
    private long recheckInNanos;

    PolicyChoice(VersionPolicy policy, LabelSettings labels, LongSupplier ticker) {
        this.policy = policy;
        this.perWorkerPolicy = policy.perWorker();
        this.selector = labels.selector();
        this.preference = labels.prefers() ? new LabelPreference(labels) : null;
        this.ticker = ticker;
    }

    /** The common case: a per-worker rule, no label rules; verdicts are remembered per answer. */
    boolean direct() {
        return perWorkerPolicy && selector.isEmpty() && preference == null;
    }

    /** The selector every worker must match ({@code rollcall.selector}). */
    LabelSelector selector() {
        return selector;
    }

    /** The selector's and the policy's verdicts on {@code answered} (those whose schema is ready), by URL. */
    Chosen choose(List<WorkerInfo> answered) {
        Map<String, String> rejectedBySelector = new HashMap<>();
        Chosen chosen = select(selector.isEmpty() ? answered : selectByLabels(answered, rejectedBySelector));
        chosen.verdicts().putAll(rejectedBySelector);
        return chosen;
    }

    /**
     * Applies the label preference, if one is configured, to {@code verdicts}; returns what applied,
     * for the snapshot's report ({@code ""} without a preference).
     */
    String prefer(List<WorkerInfo> answered, Map<String, String> verdicts) {
        return preference == null ? "" : preferIn(answered, verdicts);
    }

    /**
     * After a build that left the label preference waiting out its hold: how long until it should
     * be looked at again (0 when nothing waits). The caller asks for a build then.
     */
    long recheckInNanos() {
        return recheckInNanos;
    }

    /**
     * The workers whose labels match the selector; every other one is rejected with the requirement
     * it fails, before the policy sees it (so a custom policy never has to know about labels).
     * Verdicts are remembered per answer, as {@link #checkEach} does; the rejected go into
     * {@code rejected} (URL to reason).
     */
    private List<WorkerInfo> selectByLabels(List<WorkerInfo> answered, Map<String, String> rejected) {
        Map<WorkerInfo, String> known = new IdentityHashMap<>(answered.size() * 2);
        List<WorkerInfo> eligible = new ArrayList<>(answered.size());
        for (WorkerInfo w : answered) {
            String why = selected.get(w);
            if (why == null) {
                why = selector.mismatch(labels(w)).orElse("");
            }
            known.put(w, why);
            if (why.isEmpty()) {
                eligible.add(w);
            } else {
                rejected.put(w.endpoint().url(), why + " (rollcall.selector)");
            }
        }
        selected = known;
        return eligible;
    }

    /**
     * A worker's labels: those discovery reported, overridden by those the worker itself reported.
     * The worker's answer wins on a conflict because it is what was verified (discovery's labels
     * can be stale or written by someone else).
     */
    static Map<String, String> labels(WorkerInfo w) {
        Map<String, String> fromDiscovery = w.endpoint().labels();
        if (fromDiscovery.isEmpty()) {
            return w.labels();
        }
        if (w.labels().isEmpty()) {
            return fromDiscovery;
        }
        Map<String, String> merged = new HashMap<>(fromDiscovery);
        merged.putAll(w.labels());
        return merged;
    }

    /**
     * Applies the label preference to the policy's verdicts: while it applies, compatible workers
     * that do not match it are held back. Returns what applied, for the snapshot's report.
     */
    private String preferIn(List<WorkerInfo> answered, Map<String, String> verdicts) {
        int compatible = 0;
        List<String> notPreferred = new ArrayList<>(); // compatible ones that do not match, by URL
        for (WorkerInfo w : answered) {
            String url = w.endpoint().url();
            if ("".equals(verdicts.get(url))) {
                compatible++;
                if (!preference.selector().matches(labels(w))) {
                    notPreferred.add(url);
                }
            }
        }
        LabelPreference.Decision d = preference.decide(compatible - notPreferred.size(), compatible,
                ticker.getAsLong());
        recheckInNanos = d.recheckInNanos();
        if (d.preferring()) {
            String why = "held back: " + d.explanation() + " (rollcall.prefer-labels)";
            notPreferred.forEach(url -> verdicts.put(url, why));
        }
        return d.explanation();
    }

    /**
     * What the policy chose: URL to "" for accepted workers or to the reason they were rejected,
     * and the cohort and explanation it gave.
     */
    record Chosen(Map<String, String> verdicts, Optional<String> cohort, String explanation) {
    }

    /** What a per-worker rule "chose" as a whole: no cohort, no explanation (verdicts are per worker). */
    static final Chosen NO_CHOICE = new Chosen(Map.of(), Optional.empty(), "");

    private Chosen select(List<WorkerInfo> answered) {
        Map<String, String> verdicts = new HashMap<>(answered.size() * 4 / 3 + 16);
        if (answered.isEmpty()) {
            checked = new IdentityHashMap<>();
            return new Chosen(verdicts, Optional.empty(), "");
        }
        if (perWorkerPolicy) {
            return checkEach(answered, verdicts);
        }
        Selection selection;
        try {
            selection = Objects.requireNonNull(policy.select(List.copyOf(answered)), "the policy returned no selection");
        } catch (RuntimeException e) {
            log.error("policy {} failed; rejecting every worker until it succeeds", policy.description(), e);
            answered.forEach(w -> verdicts.put(w.endpoint().url(), "policy failed: " + e));
            return new Chosen(verdicts, Optional.empty(), "policy failed: " + e);
        }
        for (Selection.Rejection r : selection.rejected()) {
            verdicts.put(r.worker().endpoint().url(), r.reason().isEmpty() ? "rejected by the policy" : r.reason());
        }
        for (WorkerInfo w : selection.accepted()) {
            // A worker in both lists is rejected: fail closed on an inconsistent policy.
            verdicts.putIfAbsent(w.endpoint().url(), "");
        }
        return new Chosen(verdicts, selection.cohort(), selection.explanation());
    }

    /**
     * A per-worker rule's choice, as {@link VersionPolicy#select}'s default makes it, but checking
     * each answer once rather than every worker for every snapshot: {@code check} decides by what the
     * worker reported, and an answer is a new {@link WorkerInfo} object whenever that changes, so
     * a build parses only the versions that changed, not one per worker (the build's largest cost). A
     * check that throws is not remembered: it is tried again with the next snapshot.
     */
    private Chosen checkEach(List<WorkerInfo> answered, Map<String, String> byUrl) {
        Map<WorkerInfo, Verdict> known = new IdentityHashMap<>(answered.size() * 2);
        for (WorkerInfo w : answered) {
            Verdict v = checked.get(w);
            if (v == null) {
                try {
                    v = Objects.requireNonNullElse(policy.check(w), NO_VERDICT);
                    known.put(w, v);
                } catch (RuntimeException e) {
                    v = Verdict.reject("policy failed: " + e);
                }
            } else {
                known.put(w, v);
            }
            byUrl.put(w.endpoint().url(), v.accepted() ? "" : v.reason());
        }
        checked = known;
        return new Chosen(byUrl, Optional.empty(), "");
    }
}
