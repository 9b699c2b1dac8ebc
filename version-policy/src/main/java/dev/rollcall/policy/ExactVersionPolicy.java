package dev.rollcall.policy;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Accepts a worker only when the version it reports is, character for character, one of the
 * configured versions (type {@code exact}). Versions are opaque strings here: {@code v1.4.0},
 * {@code 1.4.0} and {@code 1.4.0+linux} are three different versions.
 *
 * <p>A worker that reports no version reports the empty string (a datafusion-distributed worker
 * that never called {@code with_version()}). The empty string can be listed through
 * {@link #of(String...)}, and through properties with {@code rollcall.policy.exact.accept-no-version}
 * (a blank property is unset); it is shown as {@code (no version)}.
 *
 * <p>Immutable and thread-safe; {@link #check} never throws and costs one hash lookup.
 */
public final class ExactVersionPolicy implements VersionPolicy {

    private final List<String> versions;
    private final Set<String> accepted;

    private ExactVersionPolicy(Collection<String> versions) {
        Objects.requireNonNull(versions, "versions");
        if (versions.isEmpty()) {
            throw new IllegalArgumentException("an exact version policy needs at least one version");
        }
        // Duplicates would only clutter the reasons; order is kept so that messages read as configured.
        Set<String> unique = new LinkedHashSet<>();
        for (String version : versions) {
            unique.add(Objects.requireNonNull(version, "version"));
        }
        this.versions = List.copyOf(unique);
        this.accepted = Set.copyOf(unique);
    }

    /**
     * A policy accepting exactly these versions (duplicates ignored).
     *
     * @throws IllegalArgumentException when no version is given
     * @throws NullPointerException     when a version is null
     */
    public static ExactVersionPolicy of(String... versions) {
        return new ExactVersionPolicy(List.of(Objects.requireNonNull(versions, "versions").clone()));
    }

    /**
     * A policy accepting exactly these versions (duplicates ignored), in the order given.
     *
     * @throws IllegalArgumentException when the collection is empty
     * @throws NullPointerException     when a version is null
     */
    public static ExactVersionPolicy of(Collection<String> versions) {
        return new ExactVersionPolicy(versions);
    }

    /** The accepted versions, in configured order, without duplicates. */
    public List<String> versions() {
        return versions;
    }

    @Override
    public Verdict check(WorkerInfo worker) {
        String version = worker.version();
        if (accepted.contains(version)) {
            return Verdict.accept();
        }
        if (version.isEmpty()) {
            return Verdict.reject(Printable.NO_VERSION + " is not " + expectation());
        }
        return Verdict.reject("version " + Printable.quote(version) + " is not " + expectation());
    }

    /** A rule about one worker: its verdicts may be remembered per answer. */
    @Override
    public boolean perWorker() {
        return true;
    }

    @Override
    public String description() {
        return "exact " + expectation();
    }

    @Override
    public String toString() {
        return description();
    }

    private String expectation() {
        if (versions.size() == 1) {
            return shown(versions.get(0));
        }
        return versions.stream().map(ExactVersionPolicy::shown).collect(Collectors.joining(", ", "one of [", "]"));
    }

    private static String shown(String version) {
        return version.isEmpty() ? WorkerInfo.NO_VERSION : Printable.bare(version);
    }
}
