package dev.rollcall.testkit.conformance;

import dev.rollcall.testkit.conformance.RuleResult.Outcome;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a run has found so far, rule by rule: failures win over passes, passes over "not checked".
 * Confined to the thread that runs the check. Keeps at most three failures per rule and bounds
 * every line, so that a worker that breaks a rule on every answer cannot grow the report.
 */
final class Findings {

    private static final int MAX_FAILURES_KEPT = 3;
    private static final int MAX_SEEN_CHARS = 600;

    /** The rules of docs/protocol.md, in order, with what each asks. */
    static final Map<String, String> RULES = rules();

    private final Map<String, List<String>> failures = new LinkedHashMap<>();
    private final Map<String, String> passes = new LinkedHashMap<>();
    private final Map<String, String> notChecked = new LinkedHashMap<>();

    private static Map<String, String> rules() {
        Map<String, String> r = new LinkedHashMap<>();
        r.put("W1", "serves rollcall.v1.WorkerService");
        r.put("W2", "WorkerInfo answers at once, the same between changes");
        r.put("W3", "instance id new per process, stable within it");
        r.put("W4", "version fixed for the process");
        r.put("W5", "the stream's first answer is the unary answer");
        r.put("W6", "one push per change, newest only");
        r.put("W7", "the stream stays open");
        r.put("W8", "the stream is served, or UNIMPLEMENTED");
        r.put("W9", "revisions grow, one answer per revision");
        r.put("W10", "heartbeats granted, said and kept");
        r.put("W11", "nothing more while the coordinator does not read");
        r.put("W12", "known states, every change pushed");
        r.put("W13", "stops by draining");
        r.put("W14", "every answer within the bounds");
        r.put("W15", "unknown request fields ignored");
        r.put("W16", "bounded, but two streams per connection taken");
        r.put("W17", "reflection optional, prompt when served");
        r.put("W18", "a holder_id opens a holder stream");
        r.put("W19", "a holder holds the drain until it releases or its stream ends");
        r.put("W20", "ReleaseWorker releases only this process");
        r.put("W21", "every answer while draining says holders");
        r.put("W22", "stop when the last holder lets go");
        return Collections.unmodifiableMap(r);
    }

    void fail(String rule, String seen) {
        List<String> kept = failures.computeIfAbsent(check(rule), k -> new ArrayList<>());
        if (kept.size() < MAX_FAILURES_KEPT && !kept.contains(seen)) {
            kept.add(seen);
        }
    }

    /** Records evidence that {@code rule} was observed kept; the last word wins. */
    void pass(String rule, String seen) {
        passes.put(check(rule), seen);
    }

    /** Records why {@code rule} could not be observed, unless something was observed already. */
    void notChecked(String rule, String why) {
        notChecked.putIfAbsent(check(rule), why);
    }

    boolean failed(String rule) {
        return failures.containsKey(check(rule));
    }

    boolean decided(String rule) {
        return failures.containsKey(rule) || passes.containsKey(rule);
    }

    ConformanceReport report(String target) {
        List<RuleResult> results = new ArrayList<>();
        for (Map.Entry<String, String> rule : RULES.entrySet()) {
            String id = rule.getKey();
            List<String> failed = failures.get(id);
            if (failed != null) {
                results.add(new RuleResult(id, rule.getValue(), Outcome.FAILED, bounded(String.join("; ", failed))));
            } else if (passes.containsKey(id)) {
                results.add(new RuleResult(id, rule.getValue(), Outcome.PASSED, bounded(passes.get(id))));
            } else {
                results.add(new RuleResult(id, rule.getValue(), Outcome.NOT_CHECKED,
                        bounded(notChecked.getOrDefault(id, "not observed in this run"))));
            }
        }
        return new ConformanceReport(target, results);
    }

    private static String check(String rule) {
        if (!RULES.containsKey(rule)) {
            throw new IllegalArgumentException("no rule " + rule);
        }
        return rule;
    }

    private static String bounded(String seen) {
        if (seen.length() <= MAX_SEEN_CHARS) {
            return seen;
        }
        int cut = MAX_SEEN_CHARS - 3;
        if (Character.isHighSurrogate(seen.charAt(cut - 1))) {
            cut--; // never leave half a pair
        }
        return seen.substring(0, cut) + "...";
    }
}
