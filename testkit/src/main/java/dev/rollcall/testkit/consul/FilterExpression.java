package dev.rollcall.testkit.consul;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Consul's {@code ?filter=} expression language (go-bexpr), as far as the health endpoint's
 * entries need it: selectors such as {@code Service.Tags}, {@code Service.Meta.zone} or
 * {@code Node.Meta["rack"]}; the matches {@code ==}, {@code !=}, {@code contains},
 * {@code not contains}, {@code in}, {@code not in}, {@code is empty}, {@code is not empty},
 * {@code matches}, {@code not matches}; {@code and}, {@code or}, {@code not} and parentheses;
 * values quoted ({@code "x"}, {@code `x`}) or bare. An entry is a tree of maps, lists and strings
 * ({@code Node}, {@code Service}); a selector that names no field of it is an error, as in Consul.
 * Immutable once parsed.
 */
final class FilterExpression {

    private static final Set<String> NODE_FIELDS = Set.of("ID", "Node", "Address", "Datacenter", "Meta");
    private static final Set<String> SERVICE_FIELDS = Set.of("ID", "Service", "Tags", "Address", "Port", "Meta");

    private final Predicate<Map<String, Object>> test;

    private FilterExpression(Predicate<Map<String, Object>> test) {
        this.test = test;
    }

    /**
     * @throws IllegalArgumentException with Consul's wording when the expression does not parse or
     *                                  names a selector the health endpoint does not have
     */
    static FilterExpression parse(String text) {
        Parser p = new Parser(tokens(text));
        Predicate<Map<String, Object>> test = p.or();
        if (p.at < p.tokens.size()) {
            throw new IllegalArgumentException("unexpected '" + p.tokens.get(p.at) + "'");
        }
        return new FilterExpression(test);
    }

    boolean matches(Map<String, Object> entry) {
        return test.test(entry);
    }

    // ---------------------------------------------------------------- tokens

    /** A token and whether it was quoted (a quoted token is always a value). */
    private record Token(String text, boolean quoted) {
        boolean is(String word) {
            return !quoted && text.equals(word);
        }

        @Override
        public String toString() {
            return text;
        }
    }

    private static List<Token> tokens(String s) {
        List<Token> out = new ArrayList<>();
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '(' || c == ')') {
                out.add(new Token(String.valueOf(c), false));
                i++;
            } else if (c == '=' || c == '!') {
                if (i + 1 >= s.length() || s.charAt(i + 1) != '=') {
                    throw new IllegalArgumentException("unexpected '" + c + "' at " + i);
                }
                out.add(new Token(s.substring(i, i + 2), false));
                i += 2;
            } else if (c == '`') {                      // raw string: no escapes
                int end = s.indexOf('`', i + 1);
                if (end < 0) {
                    throw new IllegalArgumentException("unterminated string at " + i);
                }
                out.add(new Token(s.substring(i + 1, end), true));
                i = end + 1;
            } else if (c == '"') {                      // Go string: \" and \\ are escapes
                StringBuilder value = new StringBuilder();
                int j = i + 1;
                while (j < s.length() && s.charAt(j) != '"') {
                    if (s.charAt(j) == '\\' && j + 1 < s.length()) {
                        j++;
                    }
                    value.append(s.charAt(j++));
                }
                if (j >= s.length()) {
                    throw new IllegalArgumentException("unterminated string at " + i);
                }
                out.add(new Token(value.toString(), true));
                i = j + 1;
            } else {
                int start = i;
                while (i < s.length() && !Character.isWhitespace(s.charAt(i)) && "()=!".indexOf(s.charAt(i)) < 0) {
                    if (s.charAt(i) == '[') {            // Meta["key with spaces"]
                        int close = s.indexOf(']', i);
                        i = close < 0 ? s.length() : close;
                    }
                    i++;
                }
                out.add(new Token(s.substring(start, i), false));
            }
        }
        return out;
    }

    // ---------------------------------------------------------------- grammar

    private static final class Parser {
        final List<Token> tokens;
        int at;

        Parser(List<Token> tokens) {
            this.tokens = tokens;
        }

        Token peek(int ahead) {
            return at + ahead < tokens.size() ? tokens.get(at + ahead) : new Token("", true);
        }

        Token next() {
            if (at >= tokens.size()) {
                throw new IllegalArgumentException("the expression ends too early");
            }
            return tokens.get(at++);
        }

        void expect(String word) {
            if (at >= tokens.size()) {
                throw new IllegalArgumentException("expected '" + word + "' but the expression ends");
            }
            Token t = next();
            if (!t.is(word)) {
                throw new IllegalArgumentException("expected '" + word + "', found '" + t + "'");
            }
        }

        Predicate<Map<String, Object>> or() {
            Predicate<Map<String, Object>> left = and();
            while (peek(0).is("or")) {
                at++;
                left = left.or(and());
            }
            return left;
        }

        Predicate<Map<String, Object>> and() {
            Predicate<Map<String, Object>> left = not();
            while (peek(0).is("and")) {
                at++;
                left = left.and(not());
            }
            return left;
        }

        Predicate<Map<String, Object>> not() {
            if (peek(0).is("not")) {
                at++;
                return not().negate();
            }
            if (peek(0).is("(")) {
                at++;
                Predicate<Map<String, Object>> inner = or();
                expect(")");
                return inner;
            }
            return match();
        }

        Predicate<Map<String, Object>> match() {
            Token first = next();
            boolean valueFirst = first.quoted() || peek(0).is("in") || (peek(0).is("not") && peek(1).is("in"));
            if (valueFirst) {
                boolean negate = peek(0).is("not");
                if (negate) {
                    at++;
                }
                expect("in");
                List<String> selector = selector(next());
                Predicate<Map<String, Object>> in = e -> contains(resolve(e, selector), first.text());
                return negate ? in.negate() : in;
            }
            List<String> selector = selector(first);
            Token op = next();
            if (op.is("==") || op.is("!=")) {
                String value = next().text();
                Predicate<Map<String, Object>> eq = e -> value.equals(text(resolve(e, selector)));
                return op.is("==") ? eq : eq.negate();
            }
            if (op.is("is")) {
                boolean negate = peek(0).is("not");
                if (negate) {
                    at++;
                }
                expect("empty");
                Predicate<Map<String, Object>> empty = e -> isEmpty(resolve(e, selector));
                return negate ? empty.negate() : empty;
            }
            boolean negate = op.is("not");
            Token verb = negate ? next() : op;
            String value = next().text();
            Predicate<Map<String, Object>> p;
            if (verb.is("contains")) {
                p = e -> contains(resolve(e, selector), value);
            } else if (verb.is("matches")) {
                Pattern regex;
                try {
                    regex = Pattern.compile(value);
                } catch (PatternSyntaxException ex) {
                    throw new IllegalArgumentException("invalid regular expression '" + value + "'");
                }
                p = e -> regex.matcher(text(resolve(e, selector))).find();
            } else {
                throw new IllegalArgumentException("unknown match operator '" + verb + "'");
            }
            return negate ? p.negate() : p;
        }
    }

    /** {@code Service.Meta["a b"]} → [Service, Meta, a b]; checked against the health entry's fields. */
    private static List<String> selector(Token token) {
        if (token.quoted()) {
            throw new IllegalArgumentException("expected a selector, found the value \"" + token + "\"");
        }
        List<String> parts = new ArrayList<>();
        String rest = token.text();
        int bracket = rest.indexOf('[');
        String tail = null;
        if (bracket >= 0) {
            tail = rest.substring(bracket);
            rest = rest.substring(0, bracket);
        }
        for (String p : rest.split("\\.", -1)) {
            parts.add(p);
        }
        if (tail != null) {
            if (!tail.startsWith("[\"") || !tail.endsWith("\"]")) {
                throw new IllegalArgumentException("Selector \"" + token + "\" is not valid");
            }
            parts.add(tail.substring(2, tail.length() - 2));
        }
        Set<String> fields = parts.get(0).equals("Node") ? NODE_FIELDS
                : parts.get(0).equals("Service") ? SERVICE_FIELDS : Set.of();
        boolean valid = parts.size() >= 2 && fields.contains(parts.get(1))
                && (parts.get(1).equals("Meta") ? parts.size() <= 3 : parts.size() == 2);
        if (!valid) {
            throw new IllegalArgumentException("Selector \"" + token + "\" is not valid");
        }
        return List.copyOf(parts);
    }

    private static Object resolve(Map<String, Object> entry, List<String> selector) {
        Object at = entry;
        for (String part : selector) {
            if (!(at instanceof Map<?, ?> map)) {
                return null;
            }
            at = map.get(part);
        }
        return at;
    }

    private static String text(Object value) {
        return value == null ? "" : Objects.toString(value);
    }

    private static boolean isEmpty(Object value) {
        if (value instanceof Collection<?> c) {
            return c.isEmpty();
        }
        if (value instanceof Map<?, ?> m) {
            return m.isEmpty();
        }
        return text(value).isEmpty();
    }

    /** A list holds the value; a map has it as a key; a string has it as a substring. */
    private static boolean contains(Object container, String value) {
        if (container instanceof Collection<?> c) {
            return c.contains(value);
        }
        if (container instanceof Map<?, ?> m) {
            return m.containsKey(value);
        }
        return container != null && text(container).contains(value);
    }
}
