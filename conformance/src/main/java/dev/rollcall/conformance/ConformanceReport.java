package dev.rollcall.conformance;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The outcome of one {@link WorkerConformance#check()}: one {@link RuleResult} per rule of
 * {@code docs/protocol.md} (W1 to W22, in order), each passed, failed, not implemented (a recommended
 * rule the worker lacks: failed instead in a strict run) or not checked.
 *
 * @param target  the address checked, {@code host:port}
 * @param results one per rule, in the page's order
 */
public record ConformanceReport(String target, List<RuleResult> results) {

    public ConformanceReport {
        Objects.requireNonNull(target, "target");
        results = List.copyOf(results);
    }

    /** Whether no rule failed (rules not checked, and recommended rules not implemented unless the run was strict, do not count). */
    public boolean passed() {
        return results.stream().noneMatch(RuleResult::failed);
    }

    /** The rules that failed, in order. */
    public List<RuleResult> failures() {
        return results.stream().filter(RuleResult::failed).toList();
    }

    /** The result of {@code rule} ({@code "W3"}), if the report has it. */
    public Optional<RuleResult> result(String rule) {
        return results.stream().filter(r -> r.rule().equals(rule)).findFirst();
    }

    /** One line per rule, as {@link RuleResult#line()}. */
    public List<String> lines() {
        return results.stream().map(RuleResult::line).toList();
    }

    /**
     * For a team's own JUnit test: returns normally when no rule failed.
     *
     * @throws AssertionError listing every rule (failed ones say what was seen)
     */
    public void requirePassed() {
        if (!passed()) {
            throw new AssertionError("the worker at " + target + " breaks " + failures().size() + " rule(s) of rollcall.v1:\n"
                    + String.join("\n", lines()));
        }
    }
}
