package dev.rollcall.policy;

import dev.rollcall.api.InternalNpmRange;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.semver4j.Semver;

/**
 * Accepts a worker whose version is in an npm-style range (type {@code semver}): {@code ^1.4},
 * {@code ~1.4.2}, {@code >=1.2 <2}, {@code 1.x}, {@code 1.2.3 - 1.4}, and any of these joined by
 * {@code ||}. Comparison follows SemVer 2.0.0 through semver4j; build metadata is ignored.
 *
 * <p>Pre-releases: unless {@code includePrerelease} is set, a pre-release such as {@code 1.5.0-rc.1}
 * is accepted only when a comparator of the same alternative names a pre-release of the same
 * major.minor.patch ({@code >=1.5.0-rc.0} accepts {@code 1.5.0-rc.1} but not {@code 1.6.0-rc.1}),
 * which is npm's rule. With it, pre-releases are ordinary versions.
 *
 * <p>Worker versions: a single leading lowercase {@code v} is accepted and ignored ({@code v1.4.0}
 * is 1.4.0), as npm does, because release tags are commonly written that way. Anything else that is
 * not strict SemVer ({@code 1.4}, {@code V1.4.0}, {@code " 1.4.0"}, {@code 01.4.0}) is rejected
 * with a reason that quotes it, as is the empty version. Ranges accept the same {@code v}.
 *
 * <p>Ranges are validated when the policy is built, more strictly than npm does: text that is not
 * npm range syntax, an empty range or alternative, or a range that can match no version fails
 * instead of turning silently into "nothing" or "everything".
 *
 * <p>Thread-safe, and immutable but for a bounded memo of verdicts by version string;
 * {@link #check} never throws and does not block.
 */
public final class SemverRangePolicy implements VersionPolicy {

    private final String range;
    private final boolean includePrerelease;
    private final InternalNpmRange matching;
    /** The same range with pre-releases included, to explain why a pre-release was left out. */
    private final InternalNpmRange matchingWithPrereleases;
    /**
     * Verdicts by version string. A verdict depends on the version alone and a fleet reports few
     * versions, while parsing one is a large share of the resolver's own work per new worker.
     */
    private final Map<String, Verdict> verdicts = new ConcurrentHashMap<>();
    private static final int MAX_REMEMBERED = 1024;

    private SemverRangePolicy(String range, boolean includePrerelease) {
        this.range = String.join(" ", range.strip().split("\\s+"));
        this.includePrerelease = includePrerelease;
        this.matching = compile(range, includePrerelease);
        this.matchingWithPrereleases = includePrerelease ? matching : compile(range, true);
    }

    /** {@code range} compiled; a text that is not an npm range is an {@link InvalidRangeException} saying why. */
    private static InternalNpmRange compile(String range, boolean includePrerelease) {
        try {
            return InternalNpmRange.compile(range, includePrerelease);
        } catch (IllegalArgumentException e) {
            throw new InvalidRangeException(e.getMessage());
        }
    }

    /**
     * A policy for {@code range}, pre-releases excluded by npm's rule.
     *
     * @throws IllegalArgumentException naming the range and what is wrong with it
     */
    public static SemverRangePolicy of(String range) {
        return of(range, false);
    }

    /**
     * A policy for {@code range}.
     *
     * @param includePrerelease whether pre-releases count as ordinary versions
     * @throws IllegalArgumentException naming the range and what is wrong with it
     */
    public static SemverRangePolicy of(String range, boolean includePrerelease) {
        Objects.requireNonNull(range, "range");
        try {
            return create(range, includePrerelease);
        } catch (InvalidRangeException e) {
            throw new IllegalArgumentException(
                    "invalid semver range " + Printable.quote(range) + ": " + e.getMessage(), e);
        }
    }

    /** Like {@link #of(String, boolean)}, but leaves the bare reason to the caller. */
    static SemverRangePolicy create(String range, boolean includePrerelease) {
        return new SemverRangePolicy(range, includePrerelease);
    }

    /** The range as configured, with runs of white space collapsed. */
    public String range() {
        return range;
    }

    /** Whether pre-releases count as ordinary versions. */
    public boolean includesPrerelease() {
        return includePrerelease;
    }

    @Override
    public Verdict check(WorkerInfo worker) {
        String version = worker.version();
        Verdict known = verdicts.get(version);
        if (known != null) {
            return known;
        }
        Verdict verdict = decide(version);
        if (verdicts.size() >= MAX_REMEMBERED) {
            verdicts.clear(); // a fleet reports a handful of versions; this only bounds a hostile one
        }
        verdicts.put(version, verdict);
        return verdict;
    }

    private Verdict decide(String version) {
        if (version.isEmpty()) {
            return Verdict.reject(Printable.NO_VERSION + " is outside " + range);
        }
        Semver semver = parseWorkerVersion(version);
        if (semver == null) {
            return Verdict.reject("version " + Printable.quote(version) + " is not semantic versioning");
        }
        if (!InternalNpmRange.comparablePreRelease(semver.getPreRelease())) {
            return Verdict.reject("version " + Printable.quote(version) + " has a pre-release number larger than "
                    + Long.MAX_VALUE + ", which cannot be compared");
        }
        if (matching.matches(semver)) {
            return Verdict.accept();
        }
        String reason = "version " + Printable.quote(version) + " is outside " + range;
        if (matchingWithPrereleases.matches(semver)) {
            reason += " (it is a pre-release, and pre-releases are not included)";
        }
        return Verdict.reject(reason);
    }

    /** A rule about one worker: its verdicts may be remembered per answer. */
    @Override
    public boolean perWorker() {
        return true;
    }

    @Override
    public String description() {
        return "semver " + range + (includePrerelease ? " (pre-releases included)" : "");
    }

    @Override
    public String toString() {
        return description();
    }

    /** Strict SemVer with an optional leading {@code v}; null otherwise. */
    private static Semver parseWorkerVersion(String version) {
        // semver4j trims before parsing; a version with white space or control characters is not
        // what the worker meant to publish, so it is refused here rather than quietly cleaned up.
        for (int i = 0; i < version.length(); i++) {
            char c = version.charAt(i);
            if (c <= ' ' || Character.isWhitespace(c) || Character.isISOControl(c)) {
                return null;
            }
        }
        return Semver.parse(version);
    }
}
