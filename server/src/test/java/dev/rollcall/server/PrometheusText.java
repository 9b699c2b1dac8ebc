package dev.rollcall.server;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A strict reader of the Prometheus text exposition format 0.0.4 (no Java parser of it is published:
 * Prometheus's own client only writes it): every line must be a {@code # HELP}, a {@code # TYPE} or a
 * sample of a family whose type came before it; anything else fails naming the line.
 */
final class PrometheusText {

    private static final String NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
    private static final String LABEL = "[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\[\\\\\"n])*\"";
    private static final String VALUE = "(?:[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?|NaN|[-+]Inf)";
    private static final Pattern HELP = Pattern.compile("# HELP (" + NAME + ")(?: .*)?");
    private static final Pattern TYPE = Pattern.compile("# TYPE (" + NAME + ") (counter|gauge|histogram|summary|untyped)");
    private static final Pattern SAMPLE = Pattern.compile("(" + NAME + ")(\\{(?:" + LABEL + "(?:," + LABEL + ")*,?)?\\})?"
            + " (" + VALUE + ")(?: -?\\d+)?");
    private static final List<String> SUFFIXES = List.of("", "_total", "_count", "_sum", "_bucket", "_max", "_created");

    /** The samples, {@code name{labels}} as written → value, in order. */
    final Map<String, Double> samples = new LinkedHashMap<>();
    /** The families' names with their types. */
    final Map<String, String> types = new LinkedHashMap<>();

    private PrometheusText() {
    }

    static PrometheusText parse(String text) {
        PrometheusText out = new PrometheusText();
        Set<String> helped = new HashSet<>();
        List<String> problems = new ArrayList<>();
        int n = 0;
        for (String line : text.split("\n", -1)) {
            n++;
            if (line.isEmpty()) {
                continue;
            }
            Matcher m;
            if ((m = HELP.matcher(line)).matches()) {
                helped.add(m.group(1));
            } else if ((m = TYPE.matcher(line)).matches()) {
                if (out.types.put(m.group(1), m.group(2)) != null) {
                    problems.add("line " + n + ": a second TYPE for " + m.group(1));
                }
            } else if ((m = SAMPLE.matcher(line)).matches()) {
                String name = m.group(1);
                if (SUFFIXES.stream().noneMatch(s -> name.endsWith(s)
                        && out.types.containsKey(name.substring(0, name.length() - s.length())))) {
                    problems.add("line " + n + ": sample " + name + " of no family typed before it");
                }
                String value = m.group(3);
                out.samples.put(name + (m.group(2) == null ? "" : m.group(2)), value.equals("NaN") ? Double.NaN
                        : value.endsWith("Inf") ? (value.startsWith("-") ? Double.NEGATIVE_INFINITY
                        : Double.POSITIVE_INFINITY) : Double.parseDouble(value));
            } else {
                problems.add("line " + n + ": not HELP, TYPE or a sample: '" + line + "'");
            }
        }
        if (!text.endsWith("\n")) {
            problems.add("the exposition does not end with a line feed");
        }
        if (!problems.isEmpty()) {
            throw new AssertionError("not the Prometheus text format: " + problems);
        }
        return out;
    }

    /** The value of the one sample named {@code name} whose labels include every one of {@code labels} ({@code k="v"}). */
    double value(String name, String... labels) {
        List<Double> found = new ArrayList<>();
        for (Map.Entry<String, Double> e : samples.entrySet()) {
            String key = e.getKey();
            if ((key.equals(name) || key.startsWith(name + "{")) && List.of(labels).stream().allMatch(key::contains)) {
                found.add(e.getValue());
            }
        }
        if (found.size() != 1) {
            throw new AssertionError(found.size() + " samples " + name + " with " + List.of(labels) + " in " + samples.keySet());
        }
        return found.get(0);
    }
}
