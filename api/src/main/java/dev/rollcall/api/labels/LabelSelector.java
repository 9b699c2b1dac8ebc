package dev.rollcall.api.labels;

import dev.rollcall.api.PeerText;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * A label selector with Kubernetes' syntax and meaning, which operators already know: requirements
 * joined by commas, all of which must hold.
 *
 * <table>
 *   <caption>Requirements</caption>
 *   <tr><th>written</th><th>holds when</th></tr>
 *   <tr><td>{@code env=prod}, {@code env==prod}</td><td>the label is there with that value</td></tr>
 *   <tr><td>{@code tier!=canary}</td><td>the label is missing or has another value</td></tr>
 *   <tr><td>{@code zone in (eu-1,eu-2)}</td><td>the label is there with one of the values</td></tr>
 *   <tr><td>{@code zone notin (us-1)}</td><td>the label is missing or has none of the values</td></tr>
 *   <tr><td>{@code gpu}</td><td>the label is there (any value)</td></tr>
 *   <tr><td>{@code !deprecated}</td><td>the label is missing</td></tr>
 * </table>
 *
 * Keys and values follow Kubernetes' rules: a key is an optional DNS-subdomain prefix and a slash,
 * then a name of at most 63 characters ({@code [A-Za-z0-9]}, with {@code -_.} inside); a value is
 * empty or of the same form as a name. The empty selector selects everything.
 *
 * <p>Immutable and thread-safe. {@link #parse} is the only way in, and fails with a message naming
 * the position and what was expected there.
 */
public final class LabelSelector {

    private static final Pattern NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
    private static final Pattern SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final LabelSelector EVERYTHING = new LabelSelector(List.of());

    /** How a requirement compares a label. */
    public enum Operator { EQUALS, NOT_EQUALS, IN, NOT_IN, EXISTS, DOES_NOT_EXIST }

    /**
     * One requirement on one label; {@code values} is empty for {@code EXISTS} and
     * {@code DOES_NOT_EXIST}, one value for the (in)equalities.
     */
    public record Requirement(String key, Operator operator, Set<String> values) {
        public Requirement {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(operator, "operator");
            values = Set.copyOf(values);
        }

        /** Whether {@code labels} satisfy this requirement. */
        public boolean matches(Map<String, String> labels) {
            String v = labels.get(key);
            return switch (operator) {
                case EQUALS, IN -> v != null && values.contains(v);
                case NOT_EQUALS, NOT_IN -> v == null || !values.contains(v);
                case EXISTS -> v != null;
                case DOES_NOT_EXIST -> v == null;
            };
        }

        /**
         * As written in a selector, with sorted values: {@code zone in (eu-1,eu-2)}; a set of only the
         * empty value is written {@code (,)}, which {@link LabelSelector#parse} reads back.
         */
        @Override
        public String toString() {
            String list = String.join(",", new TreeSet<>(values));
            // Only the empty value: "()" is refused as a slip, "(,)" reads back as this set.
            String set = list.isEmpty() ? "," : list;
            return switch (operator) {
                case EQUALS -> key + "=" + list;
                case NOT_EQUALS -> key + "!=" + list;
                case IN -> key + " in (" + set + ")";
                case NOT_IN -> key + " notin (" + set + ")";
                case EXISTS -> key;
                case DOES_NOT_EXIST -> "!" + key;
            };
        }
    }

    private final List<Requirement> requirements;

    private LabelSelector(List<Requirement> requirements) {
        this.requirements = List.copyOf(requirements);
    }

    /** The selector that selects everything. */
    public static LabelSelector everything() {
        return EVERYTHING;
    }

    /**
     * Parses {@code text}; blank text is {@link #everything()}.
     *
     * @throws IllegalArgumentException naming the position (0-based) and what was expected there,
     *                                  e.g. {@code at 4: expected '=', '==', '!=', 'in', 'notin', ',' or the end, found '<'}
     */
    public static LabelSelector parse(String text) {
        Objects.requireNonNull(text, "text");
        if (text.isBlank()) {
            return EVERYTHING;
        }
        return new LabelSelector(new Parser(text).all());
    }

    /** The requirements, in the order written. */
    public List<Requirement> requirements() {
        return requirements;
    }

    /** Whether this selects everything. */
    public boolean isEmpty() {
        return requirements.isEmpty();
    }

    /** Whether {@code labels} satisfy every requirement. */
    public boolean matches(Map<String, String> labels) {
        return mismatch(labels).isEmpty();
    }

    /**
     * Why {@code labels} do not match, naming the first requirement they fail, e.g.
     * {@code label env='staging' does not match env=prod} or {@code label env is missing, needed by env=prod};
     * empty when they match.
     */
    public Optional<String> mismatch(Map<String, String> labels) {
        for (Requirement r : requirements) {
            if (!r.matches(labels)) {
                String v = labels.get(r.key());
                return Optional.of(v == null ? "label " + r.key() + " is missing, needed by " + r
                        : "label " + r.key() + "='" + v + "' does not match " + r);
            }
        }
        return Optional.empty();
    }

    /** As written, normalised: {@code env=prod,zone in (eu-1,eu-2)}. */
    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        requirements.forEach(r -> parts.add(r.toString()));
        return String.join(",", parts);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LabelSelector other && requirements.equals(other.requirements);
    }

    @Override
    public int hashCode() {
        return requirements.hashCode();
    }

    /**
     * Whether {@code key} is a valid label key (Kubernetes' rules).
     */
    public static boolean validKey(String key) {
        int slash = key.indexOf('/');
        if (slash >= 0) {
            String prefix = key.substring(0, slash);
            if (prefix.isEmpty() || prefix.length() > 253 || !SUBDOMAIN.matcher(prefix).matches()) {
                return false;
            }
            key = key.substring(slash + 1);
        }
        return !key.isEmpty() && key.length() <= 63 && NAME.matcher(key).matches();
    }

    /** Whether {@code value} is a valid label value (Kubernetes' rules): empty, or a name of at most 63 characters. */
    public static boolean validValue(String value) {
        return value.isEmpty() || value.length() <= 63 && NAME.matcher(value).matches();
    }

    /** A recursive-descent reader of the grammar above; positions are 0-based character offsets. */
    private static final class Parser {
        private final String s;
        private int at;

        Parser(String s) {
            this.s = s;
        }

        List<Requirement> all() {
            List<Requirement> out = new ArrayList<>();
            while (true) {
                out.add(requirement());
                space();
                if (at == s.length()) {
                    return out;
                }
                expect(",", "',' or the end");
            }
        }

        private Requirement requirement() {
            space();
            if (peek("!")) {
                at++;
                return new Requirement(key(), Operator.DOES_NOT_EXIST, Set.of());
            }
            String key = key();
            space();
            if (at == s.length() || peek(",")) {
                return new Requirement(key, Operator.EXISTS, Set.of());
            }
            if (peek("==") || peek("!=") || peek("=")) {
                Operator op = peek("!=") ? Operator.NOT_EQUALS : Operator.EQUALS;
                at += peek("=") && !peek("==") ? 1 : 2;
                space();
                return new Requirement(key, op, Set.of(value()));
            }
            if (word("notin")) {
                return new Requirement(key, Operator.NOT_IN, set());
            }
            if (word("in")) {
                return new Requirement(key, Operator.IN, set());
            }
            throw error("'=', '==', '!=', 'in', 'notin', ',' or the end");
        }

        private Set<String> set() {
            space();
            expect("(", "'(' and a list of values");
            space();
            if (peek(")")) {
                throw error("at least one value");
            }
            Set<String> values = new TreeSet<>();
            while (true) {
                space();
                values.add(value());
                space();
                if (peek(")")) {
                    at++;
                    return values;
                }
                expect(",", "',' or ')'");
            }
        }

        private String key() {
            int start = at;
            while (at < s.length() && (Character.isLetterOrDigit(s.charAt(at)) || "-_./".indexOf(s.charAt(at)) >= 0)) {
                at++;
            }
            String key = s.substring(start, at);
            if (key.isEmpty()) {
                at = start;
                throw error("a label key");
            }
            if (!validKey(key)) {
                at = start;
                throw error("a label key (an optional DNS-subdomain prefix and '/', then at most 63 of "
                        + "[A-Za-z0-9-_.], starting and ending alphanumeric)", "'" + key + "'");
            }
            return key;
        }

        private String value() {
            int start = at;
            while (at < s.length() && (Character.isLetterOrDigit(s.charAt(at)) || "-_.".indexOf(s.charAt(at)) >= 0)) {
                at++;
            }
            String value = s.substring(start, at);
            if (!validValue(value)) {
                at = start;
                throw error("a label value (empty, or at most 63 of [A-Za-z0-9-_.], starting and ending "
                        + "alphanumeric)", "'" + value + "'");
            }
            return value;
        }

        private boolean word(String w) {
            if (s.startsWith(w, at) && (at + w.length() == s.length() || !Character.isLetterOrDigit(s.charAt(at + w.length())))) {
                at += w.length();
                return true;
            }
            return false;
        }

        private boolean peek(String token) {
            return s.startsWith(token, at);
        }

        private void expect(String token, String what) {
            if (!peek(token)) {
                throw error(what);
            }
            at += token.length();
        }

        private void space() {
            while (at < s.length() && Character.isWhitespace(s.charAt(at))) {
                at++;
            }
        }

        private IllegalArgumentException error(String expected) {
            return error(expected, at >= s.length() ? "the end"
                    : "'" + PeerText.escape(s.substring(at, s.offsetByCodePoints(at, 1))) + "'");
        }

        private IllegalArgumentException error(String expected, String found) {
            return new IllegalArgumentException("at " + at + ": expected " + expected + ", found " + found);
        }
    }
}
