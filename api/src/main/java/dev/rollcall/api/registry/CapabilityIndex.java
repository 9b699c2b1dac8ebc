package dev.rollcall.api.registry;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.Capability;
import dev.rollcall.api.Requirement;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerInfo;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The capabilities of one snapshot's compatible workers, by name: for each name, the workers that
 * have it as positions into the URL-ordered compatible workers, grouped by the version they have
 * (a fleet has few distinct versions of one capability). A lookup takes the requirement with the
 * fewest workers, matches its range once per distinct version (asking one worker that has it), and
 * checks only those workers against the other requirements: it costs about what its answer costs,
 * not a pass over the fleet.
 *
 * <p>Immutable once built, apart from a bounded cache of which versions meet a requirement (safe
 * to race: two readers compute equal answers).
 */
final class CapabilityIndex {

    /**
     * The requirements whose matching versions one index remembers: queries repeat a few requirements,
     * and a requester naming ever new ones (through the fleet API) must not grow a snapshot's memory.
     */
    static final int MATCH_CACHE = 64;

    private static final int[] NONE = new int[0];

    /** The workers of one version of one capability. */
    private record Group(Capability capability, int[] positions) {
    }

    /** Which groups of one name meet a requirement, and how many workers they hold. */
    private record Match(Group[] groups, int workers) {

        /** Whether a worker with {@code capabilities} has one of the matched versions. */
        boolean admits(String name, Capabilities capabilities) {
            if (groups.length == 0) {
                return false;
            }
            return capabilities.get(name).map(c -> {
                for (Group g : groups) {
                    if (g.capability.equals(c)) {
                        return true;
                    }
                }
                return false;
            }).orElse(false);
        }
    }

    private static final Match NO_MATCH = new Match(new Group[0], 0);

    private final WorkerInfo[] workers;
    private final Map<String, Group[]> byName;
    private final SortedSet<String> names;
    private final ConcurrentHashMap<Requirement, Match> matches = new ConcurrentHashMap<>();

    /** Indexes the first {@code count} of {@code compatible} (in URL order); the array is not copied and must not change. */
    CapabilityIndex(WorkerInfo[] compatible, int count) {
        this.workers = compatible;
        Map<Capability, Postings> byCapability = new HashMap<>();
        Map<String, List<Postings>> versionsByName = new HashMap<>();
        for (int i = 0; i < count; i++) {
            List<Capability> capabilities = compatible[i].capabilities().asList();
            for (int k = 0; k < capabilities.size(); k++) {
                Capability c = capabilities.get(k);
                Postings p = byCapability.get(c);
                if (p == null) {
                    p = new Postings(c);
                    byCapability.put(c, p);
                    versionsByName.computeIfAbsent(c.name(), n -> new ArrayList<>(4)).add(p);
                }
                p.add(i);
            }
        }
        Map<String, Group[]> index = new HashMap<>(versionsByName.size() * 2);
        versionsByName.forEach((name, versions) -> {
            Group[] groups = new Group[versions.size()];
            for (int g = 0; g < groups.length; g++) {
                groups[g] = versions.get(g).done();
            }
            index.put(name, groups);
        });
        this.byName = index;
        this.names = Collections.unmodifiableSortedSet(new TreeSet<>(index.keySet()));
    }

    /** The positions of one version of one capability, while the index is built. */
    private static final class Postings {
        private final Capability capability;
        private int[] positions = new int[8];
        private int size;

        Postings(Capability capability) {
            this.capability = capability;
        }

        void add(int position) {
            if (size == positions.length) {
                positions = Arrays.copyOf(positions, size * 2);
            }
            positions[size++] = position;
        }

        Group done() {
            return new Group(capability, size == positions.length ? positions : Arrays.copyOf(positions, size));
        }
    }

    /** The names of the capabilities at least one indexed worker has, sorted. */
    SortedSet<String> names() {
        return names;
    }

    /** The workers that meet every requirement, in URL order; read-only. */
    List<WorkerInfo> workersWith(Requirements requirements) {
        int[] met = positionsMeeting(requirements);
        WorkerInfo[] found = new WorkerInfo[met.length];
        for (int i = 0; i < met.length; i++) {
            found[i] = workers[met[i]];
        }
        return found.length == 0 ? List.of() : Collections.unmodifiableList(Arrays.asList(found));
    }

    /**
     * The positions (into the compatible workers) of those that meet every requirement, ascending;
     * {@code requirements} must not be empty. The array may be the index's own: read it, never write it.
     */
    int[] positionsMeeting(Requirements requirements) {
        List<Requirement> all = requirements.asList();
        Match[] each = new Match[all.size()];
        int narrowest = 0;
        for (int r = 0; r < each.length; r++) {
            each[r] = match(all.get(r));
            if (each[r].workers() == 0) {
                return NONE;
            }
            if (each[r].workers() < each[narrowest].workers()) {
                narrowest = r;
            }
        }
        int[] candidates = merged(each[narrowest].groups());
        if (each.length == 1) {
            return candidates;
        }
        int[] kept = new int[candidates.length];
        int n = 0;
        for (int p : candidates) {
            if (meetsOthers(workers[p].capabilities(), all, each, narrowest)) {
                kept[n++] = p;
            }
        }
        return n == kept.length ? kept : Arrays.copyOf(kept, n);
    }

    private static boolean meetsOthers(Capabilities capabilities, List<Requirement> all, Match[] each, int skip) {
        for (int r = 0; r < each.length; r++) {
            if (r != skip && !each[r].admits(all.get(r).name(), capabilities)) {
                return false;
            }
        }
        return true;
    }

    /** The versions of the requirement's capability that meet it: its range matched once per distinct version. */
    private Match match(Requirement requirement) {
        Match known = matches.get(requirement);
        if (known != null) {
            return known;
        }
        Group[] groups = byName.get(requirement.name());
        Match found;
        if (groups == null) {
            found = NO_MATCH;
        } else {
            List<Group> meeting = new ArrayList<>(groups.length);
            int count = 0;
            for (Group g : groups) {
                // Asked of a worker that has this version: its capabilities keep the version parsed,
                // so a new snapshot of the same workers matches without parsing it again.
                if (requirement.isMetBy(workers[g.positions()[0]].capabilities())) {
                    meeting.add(g);
                    count += g.positions().length;
                }
            }
            found = new Match(meeting.toArray(new Group[0]), count);
        }
        if (matches.size() < MATCH_CACHE) {
            matches.putIfAbsent(requirement, found);
        }
        return found;
    }

    /** The positions of the groups together, ascending (each group's are). */
    private static int[] merged(Group[] groups) {
        if (groups.length == 1) {
            return groups[0].positions();
        }
        int total = 0;
        for (Group g : groups) {
            total += g.positions().length;
        }
        int[] all = new int[total];
        int n = 0;
        for (Group g : groups) {
            System.arraycopy(g.positions(), 0, all, n, g.positions().length);
            n += g.positions().length;
        }
        // A worker has one version of a name, so the groups are disjoint: sorting is the merge.
        Arrays.sort(all);
        return all;
    }
}
