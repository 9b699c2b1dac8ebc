package dev.rollcall.api;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.semver4j.Semver;

/**
 * What one worker can do: a set of {@link Capability capabilities}, at most one per name, in name
 * order. A worker advertises them ({@code RollcallWorker.Builder#capabilities}); a coordinator
 * reads them in {@link WorkerInfo#capabilities()} and a query asks for them with
 * {@link Requirements}.
 *
 * <p>Bounded like labels: at most {@value #MAX_CAPABILITIES}. Immutable and thread-safe; the
 * factories throw {@link IllegalArgumentException} naming the bad item (escaped, bounded) and the
 * rule it breaks: a malformed capability, two with one name, too many.
 */
public final class Capabilities {

    /** The most capabilities one worker may advertise (as many as labels). */
    public static final int MAX_CAPABILITIES = 128;

    private static final Capabilities NONE = new Capabilities(new Capability[0]);

    private final Capability[] byName; // sorted by name, names unique
    // Each capability's version as a semantic version (null when unversioned), parsed on the first
    // match of a versioned requirement and kept (racy but idempotent): parsing costs far more than
    // matching, and a worker's capabilities are matched again by every query and snapshot.
    private volatile Semver[] semvers;

    private final List<Capability> asList; // made once: an index reads every worker's on each snapshot

    private Capabilities(Capability[] byName) {
        this.byName = byName;
        this.asList = Collections.unmodifiableList(Arrays.asList(byName));
    }

    /** No capabilities: what a worker from before capabilities has. */
    public static Capabilities none() {
        return NONE;
    }

    /**
     * Reads each text as {@link Capability#parse} does, e.g.
     * {@code Capabilities.of("udf:geo_distance", "datafusion=55.0.1")}.
     */
    public static Capabilities of(String... capabilities) {
        List<Capability> list = new ArrayList<>(capabilities.length);
        for (String c : capabilities) {
            list.add(Capability.parse(c));
        }
        return of(list);
    }

    /** These capabilities. */
    public static Capabilities of(Collection<Capability> capabilities) {
        if (capabilities.isEmpty()) {
            return NONE;
        }
        if (capabilities.size() > MAX_CAPABILITIES) {
            throw new IllegalArgumentException(capabilities.size() + " capabilities (at most " + MAX_CAPABILITIES + ")");
        }
        Capability[] sorted = capabilities.toArray(new Capability[0]);
        for (Capability c : sorted) {
            Objects.requireNonNull(c, "capability");
        }
        Arrays.sort(sorted);
        for (int i = 1; i < sorted.length; i++) {
            if (sorted[i - 1].name().equals(sorted[i].name())) {
                throw new IllegalArgumentException("capability '" + sorted[i].name() + "' is given twice ('"
                        + sorted[i - 1] + "' and '" + sorted[i] + "')");
            }
        }
        return new Capabilities(sorted);
    }

    /**
     * Reads a comma-separated list, as the {@code rollcall.capabilities} discovery label and the
     * command line write it: {@code udf:geo_distance, datafusion=55.0.1}; {@code ""} is none; an empty item
     * (a trailing or doubled comma) is refused, naming its place.
     */
    public static Capabilities parse(String commaSeparated) {
        return of(CommaList.split(Objects.requireNonNull(commaSeparated, "capabilities"), "capabilities", MAX_CAPABILITIES));
    }

    /** The capability of this name, if there is one. */
    public Optional<Capability> get(String name) {
        int i = indexOf(name);
        return i < 0 ? Optional.empty() : Optional.of(byName[i]);
    }

    /** Whether there is a capability of this name (with any version or none). */
    public boolean has(String name) {
        return indexOf(name) >= 0;
    }

    /** Where the capability of this name is in name order; negative when there is none. */
    int indexOf(String name) {
        int low = 0;
        int high = byName.length - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            int c = byName[mid].name().compareTo(name);
            if (c < 0) {
                low = mid + 1;
            } else if (c > 0) {
                high = mid - 1;
            } else {
                return mid;
            }
        }
        return -1;
    }

    /** The version of the capability at {@code index} (see {@link #indexOf}) as a semantic version; null when unversioned. */
    Semver semverAt(int index) {
        Semver[] parsed = semvers;
        if (parsed == null) {
            parsed = new Semver[byName.length];
            for (int i = 0; i < byName.length; i++) {
                parsed[i] = byName[i].semver();
            }
            semvers = parsed;
        }
        return parsed[index];
    }

    /** The capability at {@code index} (see {@link #indexOf}). */
    Capability at(int index) {
        return byName[index];
    }

    /** Every capability, in name order. */
    public List<Capability> asList() {
        return asList;
    }

    public int size() {
        return byName.length;
    }

    public boolean isEmpty() {
        return byName.length == 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Capabilities other && Arrays.equals(byName, other.byName);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(byName);
    }

    /** The comma-separated list {@link #parse} reads, e.g. {@code datafusion=55.0.1, udf:geo_distance}. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Capability c : byName) {
            sb.append(sb.isEmpty() ? "" : ", ").append(c);
        }
        return sb.toString();
    }
}
