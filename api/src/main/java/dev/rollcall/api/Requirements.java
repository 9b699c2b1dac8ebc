package dev.rollcall.api;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What one query needs of the workers it runs on: {@link Requirement requirements}, all of which a
 * worker must meet. The fleet's policy still decides which workers may be mixed at all; requirements
 * narrow that set per query:
 *
 * <pre>{@code
 * try (SnapshotLease lease = resolver.lease(Requirements.of("udf:geo_distance", "plan-protocol>=3"))) {
 *     run(plan(lease.snapshot().workers()));   // only compatible workers that have both
 * }
 * }</pre>
 *
 * <p>At most {@value #MAX_REQUIREMENTS}, each at most {@value Requirement#MAX_CHARS} characters; a
 * requirement given twice counts once. Immutable and thread-safe; equal when they hold the same
 * requirements in the same order. The factories throw {@link IllegalArgumentException} naming the
 * bad requirement (escaped, bounded) and why.
 */
public final class Requirements {

    /** The most requirements one query may give. */
    public static final int MAX_REQUIREMENTS = 32;

    private static final Requirements NONE = new Requirements(List.of());

    private final List<Requirement> requirements;

    private Requirements(List<Requirement> requirements) {
        this.requirements = requirements;
    }

    /** No requirements: every compatible worker will do. */
    public static Requirements none() {
        return NONE;
    }

    /** Reads each text as {@link Requirement#parse} does. */
    public static Requirements of(String... requirements) {
        return of(List.of(requirements));
    }

    /** Reads each text as {@link Requirement#parse} does. */
    public static Requirements of(Collection<String> requirements) {
        if (requirements.size() > MAX_REQUIREMENTS) {
            throw new IllegalArgumentException(requirements.size() + " requirements (at most " + MAX_REQUIREMENTS + ")");
        }
        LinkedHashSet<Requirement> parsed = new LinkedHashSet<>();
        for (String r : requirements) {
            parsed.add(Requirement.parse(r));
        }
        return parsed.isEmpty() ? NONE : new Requirements(List.copyOf(parsed));
    }

    /**
     * Reads a comma-separated list, as the command line, a {@code rollcall:} target and the fleet
     * API write it: {@code udf:geo_distance, plan-protocol>=3}; {@code ""} is none; an empty item
     * (a trailing or doubled comma) is refused, naming its place.
     */
    public static Requirements parse(String commaSeparated) {
        return of(CommaList.split(Objects.requireNonNull(commaSeparated, "requirements"), "requirements", MAX_REQUIREMENTS));
    }

    /** These and {@code more}: a worker must meet both. */
    public Requirements and(Requirements more) {
        if (more.isEmpty()) {
            return this;
        }
        if (isEmpty()) {
            return more;
        }
        LinkedHashSet<Requirement> all = new LinkedHashSet<>(requirements);
        all.addAll(more.requirements);
        if (all.size() > MAX_REQUIREMENTS) {
            throw new IllegalArgumentException(all.size() + " requirements (at most " + MAX_REQUIREMENTS + ")");
        }
        return new Requirements(List.copyOf(all));
    }

    /** The requirements, in the order given. */
    public List<Requirement> asList() {
        return requirements;
    }

    public boolean isEmpty() {
        return requirements.isEmpty();
    }

    /** Whether a worker with {@code capabilities} meets every requirement. */
    public boolean isMetBy(Capabilities capabilities) {
        for (Requirement r : requirements) {
            if (!r.isMetBy(capabilities)) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code worker} meets every requirement. */
    public boolean isMetBy(WorkerInfo worker) {
        return isMetBy(worker.capabilities());
    }

    /**
     * Why a worker with {@code capabilities} does not meet them: the first requirement it lacks, as
     * {@link Requirement#whyNotMetBy} says it; empty when it meets them all.
     */
    public Optional<String> whyNotMetBy(Capabilities capabilities) {
        for (Requirement r : requirements) {
            Optional<String> why = r.whyNotMetBy(capabilities);
            if (why.isPresent()) {
                return why;
            }
        }
        return Optional.empty();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Requirements other && requirements.equals(other.requirements);
    }

    @Override
    public int hashCode() {
        return requirements.hashCode();
    }

    /** The comma-separated list {@link #parse} reads. */
    @Override
    public String toString() {
        List<String> texts = new ArrayList<>(requirements.size());
        for (Requirement r : requirements) {
            texts.add(r.toString());
        }
        return String.join(", ", texts);
    }
}
