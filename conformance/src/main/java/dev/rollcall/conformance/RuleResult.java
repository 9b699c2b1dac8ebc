package dev.rollcall.conformance;

import java.util.Objects;

/**
 * What a conformance run found for one rule of {@code docs/protocol.md}.
 *
 * @param rule    the rule's number as the page writes it: {@code W1} ... {@code W22}
 * @param name    what the rule asks, in a few words
 * @param outcome passed, failed, not implemented (a recommended rule the worker lacks), or not checked
 *                (not observable from outside, or not asked for)
 * @param seen    what the run saw (or why it could not look); text from the worker in it is escaped
 *                and bounded with {@link dev.rollcall.api.PeerText}, so it is safe to print or log
 */
public record RuleResult(String rule, String name, Outcome outcome, String seen) {

    /** How a rule came out. */
    public enum Outcome {
        /** Observed and kept. */
        PASSED,
        /** Observed and broken; {@link #seen()} says how. */
        FAILED,
        /**
         * A recommended rule (one whose absence coordinators tolerate, marked so in {@code docs/protocol.md})
         * that the worker does not implement; {@link #seen()} says what was seen and what coordinators lose
         * without it. Does not fail a run, unless the run is strict ({@link WorkerConformance.Builder#strict}),
         * which reports it {@link #FAILED}. A recommended rule implemented wrongly is {@link #FAILED}.
         */
        NOT_IMPLEMENTED,
        /** Not observed in this run; {@link #seen()} says why. Does not fail a run. */
        NOT_CHECKED
    }

    public RuleResult {
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(seen, "seen");
    }

    /** Whether the rule was observed broken. */
    public boolean failed() {
        return outcome == Outcome.FAILED;
    }

    /** One line: {@code W3   passed      instance id stable ...: what it saw}; a longer outcome pushes the rest right. */
    public String line() {
        String shown = switch (outcome) {
            case PASSED -> "passed";
            case FAILED -> "FAILED";
            case NOT_IMPLEMENTED -> "not implemented (recommended)";
            case NOT_CHECKED -> "not checked";
        };
        return String.format("%-4s %-11s %s: %s", rule, shown, name, seen);
    }
}
