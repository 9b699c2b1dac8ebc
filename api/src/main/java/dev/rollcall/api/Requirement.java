package dev.rollcall.api;

import java.util.Objects;
import java.util.Optional;
import org.semver4j.Semver;

/**
 * One thing a query needs of a worker: a capability's name, and optionally an npm range its version
 * must be in. {@code udf:geo_distance} is met by a worker with that capability, versioned or not;
 * {@code plan-protocol>=3} by one with {@code plan-protocol} at a version in {@code >=3}; an
 * unversioned capability never meets a versioned requirement. Ranges are npm's, read as the
 * {@code semver} policy reads its range ({@code ^55}, {@code ~1.4}, {@code >=3 <5}, {@code 55.x},
 * {@code =55.0.1}, joined by {@code ||}); pre-releases match only as npm lets them.
 *
 * <p>Written as the name, then the range: the range starts at the first {@code = < > ^ ~} or white
 * space ({@code datafusion=55.0.1}, {@code datafusion ^55}). Immutable and thread-safe.
 */
public final class Requirement {

    /** The longest requirement text. */
    public static final int MAX_CHARS = 256;

    private final String name;
    private final String range; // "" when unversioned
    private final InternalNpmRange compiled; // null when unversioned

    private Requirement(String name, String range, InternalNpmRange compiled) {
        this.name = name;
        this.range = range;
        this.compiled = compiled;
    }

    /**
     * Reads a requirement, e.g. {@code udf:geo_distance} or {@code plan-protocol>=3}.
     *
     * @throws IllegalArgumentException naming the text (escaped, bounded) and what is wrong with it:
     *                                  a bad name, or a range that is not an npm range or matches no version
     */
    public static Requirement parse(String text) {
        Objects.requireNonNull(text, "requirement");
        String t = text.strip();
        String shown = "requirement '" + PeerText.escape(t, 60) + "'";
        if (t.length() > MAX_CHARS) {
            throw new IllegalArgumentException(shown + " is " + t.length() + " characters long (at most " + MAX_CHARS + ")");
        }
        int start = 0;
        while (start < t.length() && "=<>^~".indexOf(t.charAt(start)) < 0 && !Character.isWhitespace(t.charAt(start))) {
            start++;
        }
        String name = t.substring(0, start);
        String problem = Capability.nameProblem(name);
        if (problem != null) {
            throw new IllegalArgumentException(shown + ": the capability name " + problem);
        }
        String range = t.substring(start).strip();
        if (range.isEmpty()) {
            return new Requirement(name, "", null);
        }
        try {
            return new Requirement(name, range, InternalNpmRange.compile(range, false));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(shown + ": range '" + PeerText.escape(range, 60)
                    + "' is not an npm range: " + e.getMessage(), e);
        }
    }

    /** The capability it asks for. */
    public String name() {
        return name;
    }

    /** The npm range the capability's version must be in; {@code ""} when any (or no) version will do. */
    public String range() {
        return range;
    }

    /** Whether {@code capability} (of this requirement's name) meets it. */
    public boolean isMetBy(Capability capability) {
        if (!capability.name().equals(name)) {
            return false;
        }
        if (compiled == null) {
            return true;
        }
        Semver version = capability.semver();
        return version != null && compiled.matches(version);
    }

    /** Whether a worker with {@code capabilities} meets it. */
    public boolean isMetBy(Capabilities capabilities) {
        int i = capabilities.indexOf(name);
        return i >= 0 && isMetBy(capabilities, i);
    }

    /** Whether the capability at {@code index} of {@code capabilities}, of this name, meets it (its version parsed once). */
    private boolean isMetBy(Capabilities capabilities, int index) {
        if (compiled == null) {
            return true;
        }
        Semver version = capabilities.semverAt(index);
        return version != null && compiled.matches(version);
    }

    /**
     * Why a worker with {@code capabilities} does not meet it, e.g. {@code lacks udf:geo_distance} or
     * {@code lacks plan-protocol>=3 (has plan-protocol=2)}; empty when it does.
     */
    public Optional<String> whyNotMetBy(Capabilities capabilities) {
        int i = capabilities.indexOf(name);
        if (i < 0) {
            return Optional.of("lacks " + this);
        }
        if (isMetBy(capabilities, i)) {
            return Optional.empty();
        }
        Capability c = capabilities.at(i);
        return Optional.of("lacks " + this + " (has " + (c.versioned() ? c.toString() : name + " without a version") + ")");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Requirement other && name.equals(other.name) && range.equals(other.range);
    }

    @Override
    public int hashCode() {
        return name.hashCode() * 31 + range.hashCode();
    }

    /** The name, then the range as written: {@code plan-protocol>=3}. */
    @Override
    public String toString() {
        if (range.isEmpty()) {
            return name;
        }
        return "=<>^~".indexOf(range.charAt(0)) >= 0 ? name + range : name + " " + range;
    }
}
