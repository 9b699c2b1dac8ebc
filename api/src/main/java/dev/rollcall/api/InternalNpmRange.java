package dev.rollcall.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.semver4j.Semver;
import org.semver4j.range.Range;
import org.semver4j.range.Range.RangeOperator;
import org.semver4j.range.RangeList;
import org.semver4j.range.RangeListFactory;

/**
 * An npm range ({@code ^1.4}, {@code ~1.4.2}, {@code >=1.2 <2}, {@code 1.x}, {@code 1.2.3 - 1.4},
 * joined by {@code ||}) compiled into a semver4j {@link RangeList}: the one reading of a range, for
 * a {@link Requirement}'s and the {@code semver} policy's. Internal, not API (grpc-java's
 * {@code Internal*} convention): for Rollcall's own modules only (the architecture test allows
 * {@code rollcall-version-policy} alone), and it may change in any release.
 *
 * <p>Why not hand the text to {@link RangeListFactory} directly: semver4j 6.0.0 drops every token it
 * does not understand without a word ({@code ^^1} matches nothing, {@code >=1.2 banana} means
 * {@code >=1.2}, {@code || ^1.4} matches everything), reads a whole comparator set with one regex
 * ({@code ^1.4 <1.6} silently loses the caret and means {@code <1.6.0}), and gets several valid
 * forms wrong ({@code x} and {@code ~*} match nothing, {@code ^0} matches everything from 0.0.0,
 * {@code ^0.0} matches nothing, {@code 1.0 - *} matches nothing). So this class checks the text
 * against the npm grammar itself, rewrites the forms semver4j mishandles into equivalent ones it
 * handles, gives semver4j one comparator at a time, and verifies it understood each.
 *
 * <p>Stricter than npm on purpose, because a range here decides which workers may run together:
 * an empty range or an empty alternative ({@code ^1.4 ||}) is an error rather than "any version",
 * as is a range or alternative that can match no version ({@code >2 <1}); nothing but wildcards may
 * follow a wildcard ({@code 1.x.3} is refused); Ivy/Maven ranges ({@code [1.0,2.0)}) are refused.
 *
 * <p>Immutable once built; {@link #matches} may be called from any thread.
 */
public final class InternalNpmRange {

    private static final String NUMBER_OR_WILDCARD = "0|[1-9][0-9]*|[xX*]";
    private static final String PRERELEASE_ID = "0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*";
    private static final String BUILD_ID = "[0-9A-Za-z-]+";
    private static final String OPERATOR = "<=|>=|<|>|=|~>|~|\\^";

    /** An optional operator and a partial version: {@code >=v1.2}, {@code ~1.4.2-rc.1}, {@code 1.x}. */
    private static final Pattern COMPARATOR = Pattern.compile(
            "(?<operator>" + OPERATOR + ")?v?"
                    + "(?<major>" + NUMBER_OR_WILDCARD + ")"
                    + "(?:\\.(?<minor>" + NUMBER_OR_WILDCARD + ")"
                    + "(?:\\.(?<patch>" + NUMBER_OR_WILDCARD + ")"
                    + "(?<qualifier>"
                    + "(?:-(?:" + PRERELEASE_ID + ")(?:\\.(?:" + PRERELEASE_ID + "))*)?"
                    + "(?:\\+" + BUILD_ID + "(?:\\." + BUILD_ID + ")*)?"
                    + "))?)?");
    private static final Pattern OPERATOR_ALONE = Pattern.compile(OPERATOR);
    private static final Pattern WHITESPACE = Pattern.compile("\\s+");

    /** Leaves room for the +1 that caret, tilde and x-range bounds add. */
    private static final int LARGEST_NUMBER = Integer.MAX_VALUE - 1;

    private static final Semver SMALLEST_VERSION = Semver.parse("0.0.0-0");

    private final RangeList rangeList;

    private InternalNpmRange(RangeList rangeList) {
        this.rangeList = rangeList;
    }

    /**
     * Compiles {@code text}.
     *
     * @param includePrerelease whether pre-releases are in the range like any other version, or only
     *                          those that a comparator with the same major.minor.patch names (npm's rule)
     * @throws IllegalArgumentException saying what is wrong with the text (not repeating it)
     */
    public static InternalNpmRange compile(String text, boolean includePrerelease) {
        Objects.requireNonNull(text, "range");
        String range = text.strip();
        if (range.isEmpty()) {
            throw new IllegalArgumentException("the range is empty");
        }
        RangeList rangeList = new RangeList(includePrerelease);
        // -1 keeps trailing empty alternatives, which must be reported rather than dropped.
        for (String alternative : range.split("\\|\\|", -1)) {
            String comparatorSet = alternative.strip();
            if (comparatorSet.isEmpty()) {
                throw new IllegalArgumentException("an alternative next to '||' is empty");
            }
            List<Range> ranges = new ArrayList<>();
            for (String token : semver4jTokens(comparatorSet)) {
                ranges.addAll(readBySemver4j(token, includePrerelease));
            }
            if (matchesNothing(ranges, includePrerelease)) {
                throw new IllegalArgumentException(quote(comparatorSet) + " matches no version");
            }
            rangeList.add(ranges);
        }
        return new InternalNpmRange(rangeList);
    }

    /** Whether {@code version} is in the range; build metadata is ignored, as SemVer says. */
    public boolean matches(Semver version) {
        return rangeList.isSatisfiedBy(version);
    }

    @Override
    public String toString() {
        return rangeList.toString();
    }

    /**
     * A part of the range in quotes, escaped and bounded as {@link PeerText} does: the range comes
     * from settings or a request, and every caller puts the reason into a message or a log line.
     */
    private static String quote(String part) {
        return "'" + PeerText.escape(part, 64) + "'";
    }

    /** One comparator set, split and rewritten into tokens that semver4j reads correctly one by one. */
    private static List<String> semver4jTokens(String comparatorSet) {
        List<String> words = List.of(WHITESPACE.split(comparatorSet));
        if (words.contains("-")) {
            return hyphenTokens(comparatorSet, words);
        }
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < words.size(); i++) {
            String word = words.get(i);
            // npm allows a space after an operator: ">= 1.2", "^ 1.4".
            if (OPERATOR_ALONE.matcher(word).matches()) {
                if (i + 1 == words.size()) {
                    throw new IllegalArgumentException(quote(word) + " has no version after it");
                }
                i++;
                word = word + words.get(i);
            }
            tokens.add(comparatorToken(word));
        }
        return tokens;
    }

    /**
     * {@code A - B} means {@code >=A <=B} with npm's x-range reading of partial versions, which is
     * also how semver4j reads those two primitives. Spelling it out avoids semver4j's hyphen handling,
     * which turns {@code 1.0 - *} into a range that matches nothing.
     */
    private static List<String> hyphenTokens(String comparatorSet, List<String> words) {
        if (words.size() != 3 || !words.get(1).equals("-")) {
            throw new IllegalArgumentException(quote(comparatorSet)
                    + " is not a hyphen range: write 'A - B' with nothing else between '||'");
        }
        Partial from = partial(words.get(0), false);
        Partial to = partial(words.get(2), false);
        List<String> tokens = new ArrayList<>(2);
        if (!from.isAny()) {
            tokens.add(">=" + from.text());
        }
        if (!to.isAny()) {
            tokens.add("<=" + to.text());
        }
        if (tokens.isEmpty()) {
            tokens.add("*");
        }
        return tokens;
    }

    private static String comparatorToken(String word) {
        Matcher matcher = matcher(word);
        String operator = Objects.requireNonNullElse(matcher.group("operator"), "");
        Partial version = partial(word, matcher);
        if (version.isAny()) {
            // semver4j reads x, =*, ~* and <=* as "nothing" and ^* as garbage; npm reads them all
            // as any version, except <* and >*, which indeed leave nothing.
            if (operator.equals("<") || operator.equals(">")) {
                throw new IllegalArgumentException(quote(word) + " matches no version");
            }
            return "*";
        }
        return switch (operator) {
            // semver4j gets ^0 and ^0.0 wrong; for a 0 major, a caret on a partial version means
            // exactly the x-range of what is given (^0 is 0.x, ^0.0 is 0.0.x, ^0.1 is 0.1.x).
            case "^" -> version.major() == 0 && version.given() < 3 ? version.text() : "^" + version.text();
            case "~>" -> "~" + version.text();
            default -> operator + version.text();
        };
    }

    private static Partial partial(String word, boolean operatorAllowed) {
        Matcher matcher = matcher(word);
        if (!operatorAllowed && matcher.group("operator") != null) {
            throw new IllegalArgumentException(quote(word) + " cannot be an end of a hyphen range: use a plain version");
        }
        return partial(word, matcher);
    }

    private static Matcher matcher(String word) {
        Matcher matcher = COMPARATOR.matcher(word);
        if (!matcher.matches()) {
            throw new IllegalArgumentException(quote(word) + " is not a version or comparator");
        }
        return matcher;
    }

    private static Partial partial(String word, Matcher matcher) {
        String[] parts = {matcher.group("major"), matcher.group("minor"), matcher.group("patch")};
        int[] numbers = new int[3];
        int given = 0;
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i];
            boolean isNumber = part != null && Character.isDigit(part.charAt(0));
            if (!isNumber) {
                continue;
            }
            if (given < i) {
                throw new IllegalArgumentException(quote(word) + " has a number after a wildcard");
            }
            numbers[i] = number(word, part);
            given++;
        }
        String qualifier = Objects.requireNonNullElse(matcher.group("qualifier"), "");
        if (!qualifier.isEmpty() && given < 3) {
            throw new IllegalArgumentException(quote(word) + " has a pre-release or build without a full version");
        }
        int build = qualifier.indexOf('+');
        String preRelease = build < 0 ? qualifier : qualifier.substring(0, build);
        if (!preRelease.isEmpty() && !comparablePreRelease(List.of(preRelease.substring(1).split("\\.")))) {
            throw new IllegalArgumentException(quote(word) + " has a pre-release number larger than " + Long.MAX_VALUE);
        }
        return new Partial(given, numbers[0], numbers[1], numbers[2], qualifier);
    }

    /**
     * Whether semver4j can compare these pre-release identifiers: it reads every run of digits in
     * one (all of a numeric identifier, each run of an alphanumeric one such as {@code rc12}) as a
     * {@code long} and throws for a larger one, where SemVer sets no bound.
     */
    public static boolean comparablePreRelease(List<String> identifiers) {
        for (String id : identifiers) {
            int i = 0;
            while (i < id.length()) {
                if (id.charAt(i) < '0' || id.charAt(i) > '9') {
                    i++;
                    continue;
                }
                int start = i;
                while (i < id.length() && id.charAt(i) >= '0' && id.charAt(i) <= '9') {
                    i++;
                }
                while (start < i - 1 && id.charAt(start) == '0') {
                    start++;
                }
                String run = id.substring(start, i);
                if (run.length() > 19 || run.length() == 19 && run.compareTo(String.valueOf(Long.MAX_VALUE)) > 0) {
                    return false;
                }
            }
        }
        return true;
    }

    private static int number(String word, String digits) {
        try {
            int value = Integer.parseInt(digits);
            if (value <= LARGEST_NUMBER) {
                return value;
            }
        } catch (NumberFormatException e) {
            // falls through: the regex admits only digits, so the number is merely too large
        }
        throw new IllegalArgumentException(quote(word) + " has a number larger than " + LARGEST_NUMBER);
    }

    /** Asks semver4j to read one comparator and checks that it did not drop it. */
    private static List<Range> readBySemver4j(String token, boolean includePrerelease) {
        List<List<Range>> sets = RangeListFactory.create(token, includePrerelease).get();
        if (sets.size() != 1 || sets.get(0).isEmpty()) {
            throw new IllegalArgumentException("semver4j cannot read " + quote(token));
        }
        return sets.get(0);
    }

    /**
     * True only when no version can satisfy every range of the set. Never true for a set that some
     * version satisfies; it may miss exotic empty sets made of pre-release bounds.
     */
    private static boolean matchesNothing(List<Range> ranges, boolean includePrerelease) {
        Bound lower = null;
        Bound upper = null;
        boolean namesPrerelease = false;
        for (Range range : ranges) {
            Semver version = range.getRangeVersion();
            namesPrerelease |= !version.getPreRelease().isEmpty();
            RangeOperator operator = operatorOf(range);
            switch (operator) {
                case GT -> lower = Bound.tighterLower(lower, new Bound(version, false));
                case GTE -> lower = Bound.tighterLower(lower, new Bound(version, true));
                case LT -> upper = Bound.tighterUpper(upper, new Bound(version, false));
                case LTE -> upper = Bound.tighterUpper(upper, new Bound(version, true));
                case EQ -> {
                    lower = Bound.tighterLower(lower, new Bound(version, true));
                    upper = Bound.tighterUpper(upper, new Bound(version, true));
                }
            }
        }
        Bound from = lower == null ? new Bound(SMALLEST_VERSION, true) : lower;
        if (upper != null) {
            int order = from.version().compareTo(upper.version());
            if (order > 0 || (order == 0 && !(from.inclusive() && upper.inclusive()))) {
                return true;
            }
        }
        if (includePrerelease || namesPrerelease) {
            return false;
        }
        // Only releases can match (npm's pre-release rule), and the smallest release above the lower
        // bound is in the set exactly when the set holds any release at all.
        Semver smallestRelease = lower == null
                ? Semver.ZERO
                : Semver.create(lower.version().getMajor(), lower.version().getMinor(),
                        lower.version().getPatch() + (lower.inclusive() ? 0 : 1));
        return !new RangeList(false).add(ranges).isSatisfiedBy(smallestRelease);
    }

    /** semver4j keeps a range's operator to itself; equality with a rebuilt range reveals it. */
    private static RangeOperator operatorOf(Range range) {
        for (RangeOperator operator : RangeOperator.values()) {
            if (range.equals(new Range(range.getRangeVersion(), operator))) {
                return operator;
            }
        }
        throw new IllegalStateException("semver4j range " + range + " has an unknown operator");
    }

    /**
     * A partial version as written in a range.
     *
     * @param given     how many leading numbers are given (0 for {@code *}, 2 for {@code 1.4.x})
     * @param qualifier {@code -pre.release+build}, only with all three numbers; else empty
     */
    private record Partial(int given, int major, int minor, int patch, String qualifier) {

        boolean isAny() {
            return given == 0;
        }

        /** Without wildcards or a {@code v}: semver4j reads {@code 1.4} exactly as {@code 1.4.x}. */
        String text() {
            return switch (given) {
                case 0 -> "*";
                case 1 -> Integer.toString(major);
                case 2 -> major + "." + minor;
                default -> major + "." + minor + "." + patch + qualifier;
            };
        }
    }

    /** One end of the interval a comparator set allows. */
    private record Bound(Semver version, boolean inclusive) {

        static Bound tighterLower(Bound current, Bound candidate) {
            if (current == null) {
                return candidate;
            }
            int order = candidate.version.compareTo(current.version);
            return order > 0 || (order == 0 && !candidate.inclusive) ? candidate : current;
        }

        static Bound tighterUpper(Bound current, Bound candidate) {
            if (current == null) {
                return candidate;
            }
            int order = candidate.version.compareTo(current.version);
            return order < 0 || (order == 0 && !candidate.inclusive) ? candidate : current;
        }
    }
}
