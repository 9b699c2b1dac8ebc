package dev.rollcall.conformance;

import dev.rollcall.conformance.RuleResult.Outcome;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What a run has found so far, rule by rule: failures win over "not implemented" (a recommended
 * rule the worker lacks), that over passes, passes over "not checked". In a strict run a rule not
 * implemented is reported failed.
 * Confined to the thread that runs the check. Keeps at most three failures per rule and bounds
 * every line, so that a worker that breaks a rule on every answer cannot grow the report.
 */
final class Findings {

    private static final int MAX_FAILURES_KEPT = 3;
    private static final int MAX_SEEN_CHARS = 600;
    private static final String NOT_IMPLEMENTED_STRICT = "not implemented (recommended; a strict run requires it): ";

    /** The rules' numbers, in the page's order ({@link Rule} defines them). */
    static final Set<String> RULES = Arrays.stream(Rule.values()).map(Rule::name)
            .collect(Collectors.toCollection(LinkedHashSet::new));

    private final boolean strict;
    private final Map<String, List<String>> failures = new LinkedHashMap<>();
    private final Map<String, String> passes = new LinkedHashMap<>();
    private final Map<String, String> absent = new LinkedHashMap<>();
    private final Map<String, String> notChecked = new LinkedHashMap<>();

    /** @param strict whether a recommended rule the worker does not implement fails the run */
    Findings(boolean strict) {
        this.strict = strict;
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

    /**
     * Records that the worker does not implement {@code rule}, a recommended one (its absence only:
     * one implemented wrongly is {@link #fail}ed); wins over passes, the first word is kept.
     *
     * @throws IllegalArgumentException for a required rule, whose absence is a failure
     */
    void notImplemented(String rule, String seen) {
        if (!Rule.of(rule).recommended()) {
            throw new IllegalArgumentException(rule + " is required: its absence is a failure");
        }
        absent.putIfAbsent(rule, seen);
    }

    /** Records why {@code rule} could not be observed, unless something was observed already. */
    void notChecked(String rule, String why) {
        notChecked.putIfAbsent(check(rule), why);
    }

    boolean failed(String rule) {
        return failures.containsKey(check(rule));
    }

    boolean decided(String rule) {
        return failures.containsKey(rule) || passes.containsKey(rule) || absent.containsKey(rule);
    }

    ConformanceReport report(String target) {
        List<RuleResult> results = new ArrayList<>();
        for (Rule rule : Rule.values()) {
            String id = rule.name();
            List<String> failed = failures.get(id);
            if (failed != null) {
                results.add(new RuleResult(id, rule.asks, Outcome.FAILED, bounded(String.join("; ", failed))));
            } else if (absent.containsKey(id)) {
                String seen = absent.get(id) + ": without it, " + rule.lost;
                results.add(strict
                        ? new RuleResult(id, rule.asks, Outcome.FAILED, bounded(NOT_IMPLEMENTED_STRICT + seen))
                        : new RuleResult(id, rule.asks, Outcome.NOT_IMPLEMENTED, bounded(seen)));
            } else if (passes.containsKey(id)) {
                results.add(new RuleResult(id, rule.asks, Outcome.PASSED, bounded(passes.get(id))));
            } else {
                results.add(new RuleResult(id, rule.asks, Outcome.NOT_CHECKED,
                        bounded(notChecked.getOrDefault(id, "not observed in this run"))));
            }
        }
        return new ConformanceReport(target, results);
    }

    private static String check(String rule) {
        return Rule.of(rule).name();
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
