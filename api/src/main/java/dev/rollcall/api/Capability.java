package dev.rollcall.api;

import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import org.semver4j.Semver;

/**
 * One thing a worker says it can do, with an optional version: {@code udf:geo_distance},
 * {@code datafusion=55.0.1}, {@code plan-protocol=3}. A query that needs it says so with a
 * {@link Requirement}; a versioned requirement ({@code plan-protocol>=3}) matches the version by an
 * npm range, as the {@code semver} policy matches worker versions.
 *
 * <p>A name is 1 to {@value #MAX_NAME_CHARS} characters: letters, digits and {@code . _ : / -},
 * starting with a letter or digit (no white space, no {@code = < > ^ ~ , |}, which the requirement
 * and list syntaxes use). A version is 1 to {@value #MAX_VERSION_CHARS} characters: one to three
 * dot-separated numbers without leading zeros ({@code 3}, {@code 55.0}, {@code 55.0.1}), then an
 * optional {@code -pre.release} (its numbers at most {@link Long#MAX_VALUE}, as semver4j compares
 * them) and {@code +build}; missing numbers read as 0 when matched
 * ({@code 3} is {@code 3.0.0}). {@code ""} means unversioned. Capabilities are compared by name and
 * version as written.
 *
 * <p>Immutable and thread-safe. The constructor and {@link #parse} throw
 * {@link IllegalArgumentException} naming the bad text (escaped, bounded) and the rule it breaks.
 *
 * @param name    what the worker can do
 * @param version its version, {@code ""} when it has none
 */
public record Capability(String name, String version) implements Comparable<Capability> {

    /** The longest name: enough for {@code udf:} and a qualified function name. */
    public static final int MAX_NAME_CHARS = 128;
    /** The longest version, build metadata included. */
    public static final int MAX_VERSION_CHARS = 64;

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:/-]*");
    private static final String NUMBER = "(?:0|[1-9][0-9]{0,8})";
    private static final String IDENTIFIER = "[0-9A-Za-z-]+";
    private static final Pattern VERSION = Pattern.compile(NUMBER + "(?:\\." + NUMBER + "){0,2}"
            + "(?:-" + IDENTIFIER + "(?:\\." + IDENTIFIER + ")*)?"
            + "(?:\\+" + IDENTIFIER + "(?:\\." + IDENTIFIER + ")*)?");

    public Capability {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(version, "version");
        String problem = nameProblem(name);
        if (problem != null) {
            throw new IllegalArgumentException("capability name " + problem);
        }
        if (!version.isEmpty()) {
            if (version.length() > MAX_VERSION_CHARS) {
                throw new IllegalArgumentException("capability '" + name + "': version '" + PeerText.escape(version, 40)
                        + "' is " + version.length() + " characters long (at most " + MAX_VERSION_CHARS + ")");
            }
            if (!VERSION.matcher(version).matches()) {
                throw new IllegalArgumentException("capability '" + name + "': version '" + PeerText.escape(version, 40)
                        + "' is not a version (1, 1.2 or 1.2.3, then an optional -pre.release and +build)");
            }
            // Refused here, where a worker's answer is checked: semver4j compares pre-release numbers
            // as longs, and a larger one would fail every query's match against this worker instead.
            if (!InternalNpmRange.comparablePreRelease(preRelease(version))) {
                throw new IllegalArgumentException("capability '" + name + "': version '" + PeerText.escape(version, 40)
                        + "' has a pre-release number larger than " + Long.MAX_VALUE);
            }
        }
    }

    /** The pre-release identifiers of a well-formed version ({@code rc.1} of {@code 1.0.0-rc.1+b}); none without one. */
    private static List<String> preRelease(String version) {
        int build = version.indexOf('+');
        String core = build < 0 ? version : version.substring(0, build);
        int dash = core.indexOf('-');
        return dash < 0 ? List.of() : List.of(core.substring(dash + 1).split("\\."));
    }

    /** An unversioned capability. */
    public static Capability of(String name) {
        return new Capability(name, "");
    }

    /**
     * Reads {@code name} or {@code name=version}, e.g. {@code datafusion=55.0.1}; surrounding white
     * space is ignored.
     *
     * @throws IllegalArgumentException naming the text when it is not one
     */
    public static Capability parse(String text) {
        Objects.requireNonNull(text, "capability");
        String t = text.strip();
        int eq = t.indexOf('=');
        return eq < 0 ? new Capability(t, "") : new Capability(t.substring(0, eq).strip(), t.substring(eq + 1).strip());
    }

    /**
     * What is wrong with {@code name} as a capability's name (quoted, escaped, bounded), or
     * {@code null} when it is one. Requirements name capabilities by the same rule.
     */
    static String nameProblem(String name) {
        if (name.isEmpty()) {
            return "is empty";
        }
        String shown = "'" + PeerText.escape(name, 40) + "'";
        if (name.length() > MAX_NAME_CHARS) {
            return shown + " is " + name.length() + " characters long (at most " + MAX_NAME_CHARS + ")";
        }
        if (!NAME.matcher(name).matches()) {
            return shown + " is not letters, digits and . _ : / - (starting with a letter or digit)";
        }
        return null;
    }

    /** Whether it has a version. */
    public boolean versioned() {
        return !version.isEmpty();
    }

    /** The version as a full semantic version ({@code 3} is {@code 3.0.0}); null when unversioned. */
    Semver semver() {
        if (version.isEmpty()) {
            return null;
        }
        int end = version.length();
        for (int i = 0; i < version.length(); i++) {
            char c = version.charAt(i);
            if (c == '-' || c == '+') {
                end = i;
                break;
            }
        }
        String core = version.substring(0, end);
        int dots = (int) core.chars().filter(c -> c == '.').count();
        String full = core + ".0".repeat(2 - dots) + version.substring(end);
        return Semver.parse(full);
    }

    @Override
    public int compareTo(Capability other) {
        int c = name.compareTo(other.name);
        return c != 0 ? c : version.compareTo(other.version);
    }

    /** {@code name} or {@code name=version}: what {@link #parse} reads. */
    @Override
    public String toString() {
        return version.isEmpty() ? name : name + "=" + version;
    }
}
