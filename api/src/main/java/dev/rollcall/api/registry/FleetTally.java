package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a snapshot counts over its statuses (in URL order): each status's state, the compatible
 * workers and their endpoints in URL order, the workers per state and per version. Made either by
 * reading every status ({@link #count}) or from the previous snapshot's tally and the statuses that
 * differ from its own ({@link #update}): a resolver that publishes a snapshot after 100 of 10,000
 * workers changed then reads 100 statuses, not 10,000 (each a few objects scattered in the heap,
 * which on a busy machine are out of the caches between builds).
 * Both give equal tallies for equal statuses.
 *
 * <p>Immutable once made; never handed out.
 */
final class FleetTally {

    private static final WorkerStatus.State[] STATES = WorkerStatus.State.values();
    private static final byte COMPATIBLE = (byte) WorkerStatus.State.COMPATIBLE.ordinal();
    /** Room for this many more compatible workers than the tally before had, before an array grows. */
    private static final int SPARE = 64;

    /** Each status's state's ordinal, in the statuses' order. */
    final byte[] states;
    /**
     * The compatible workers and their endpoints, in URL order: the first {@link #compatible} of
     * each array (an array may be a little longer: a build does not copy it to trim it).
     */
    final WorkerInfo[] workers;
    final WorkerEndpoint[] endpoints;
    final int compatible;
    private final int[] byState;
    /** Compatible, rejected and outside-subset workers per version; compatible ones per version (never a zero). */
    private final Map<String, int[]> perVersion;
    private final Map<String, int[]> compatiblePerVersion;

    private FleetTally(byte[] states, WorkerInfo[] workers, WorkerEndpoint[] endpoints, int compatible, int[] byState,
                       Map<String, int[]> perVersion, Map<String, int[]> compatiblePerVersion) {
        this.states = states;
        this.workers = workers;
        this.endpoints = endpoints;
        this.compatible = compatible;
        this.byState = byState;
        this.perVersion = perVersion;
        this.compatiblePerVersion = compatiblePerVersion;
    }

    /** The tally of {@code statuses}, reading each. */
    static FleetTally count(WorkerStatus[] statuses) {
        Builder b = new Builder(statuses.length, statuses.length, new int[STATES.length], new HashMap<>(),
                new HashMap<>());
        for (int i = 0; i < statuses.length; i++) {
            b.add(i, statuses[i]);
        }
        return b.done();
    }

    /**
     * The tally of {@code now} from {@code before}, the tally of {@code was}: statuses found in
     * {@code was} in the same order (the same objects) are not read. {@code null} when {@code now}
     * is not in strict URL order (the caller sorts and {@link #count counts}); {@code was} is.
     */
    static FleetTally update(FleetTally before, WorkerStatus[] was, WorkerStatus[] now) {
        // Room for the compatible workers before and a few more: while converging on 10,000 workers a
        // resolver builds hundreds of snapshots, each with a few more compatible workers than the last;
        // arrays as long as the fleet, then trimmed, would allocate the fleet twice over per build.
        int room = (int) Math.min(now.length, (long) before.compatible + Math.max(0, now.length - was.length) + SPARE);
        Builder b = new Builder(now.length, room, before.byState.clone(), copy(before.perVersion),
                copy(before.compatiblePerVersion));
        int n = now.length;
        int m = was.length;
        int j = 0;
        int k = 0; // the next of before's compatible workers, in step with j
        boolean afterNew = false; // whether now[i - 1] was not found in was
        for (int i = 0; i < n; ) {
            WorkerStatus s = now[i];
            if (j < m && s == was[j]) {
                // Two statuses found in was one after the other are in URL order, as was is; one next
                // to a status that was not found is compared with it.
                if (afterNew && !before(now[i - 1], s)) {
                    return null;
                }
                byte state = before.states[j];
                b.states[i] = state;
                if (state == COMPATIBLE) {
                    b.list(before.workers[k], before.endpoints[k++]);
                }
                afterNew = false;
                i++;
                j++;
                continue;
            }
            int c = j < m ? url(s).compareTo(url(was[j])) : -1;
            if (c >= 0) { // was[j] is gone (c > 0) or s replaces it (c == 0)
                if (before.states[j] == COMPATIBLE) {
                    k++;
                }
                b.remove(was[j], before.states[j]);
                j++;
                if (c > 0) {
                    continue;
                }
            }
            if (i > 0 && !before(now[i - 1], s)) {
                return null;
            }
            b.add(i, s);
            afterNew = true;
            i++;
        }
        for (; j < m; j++) {
            b.remove(was[j], before.states[j]);
        }
        return b.done();
    }

    private static boolean before(WorkerStatus a, WorkerStatus b) {
        return url(a).compareTo(url(b)) < 0;
    }

    private static String url(WorkerStatus s) {
        return s.endpoint().url();
    }

    private static Map<String, int[]> copy(Map<String, int[]> counts) {
        Map<String, int[]> m = new HashMap<>(Math.max(4, counts.size() * 2));
        counts.forEach((v, c) -> m.put(v, c.clone()));
        return m;
    }

    /** The counts by state, and {@code overKeptCap} (not a state: the resolver's, given with the snapshot). */
    FleetCounts counts(int overKeptCap) {
        return new FleetCounts(states.length, at(WorkerStatus.State.COMPATIBLE), at(WorkerStatus.State.REJECTED),
                at(WorkerStatus.State.UNREACHABLE), at(WorkerStatus.State.PENDING), at(WorkerStatus.State.DRAINING),
                at(WorkerStatus.State.NOT_SERVING), overKeptCap, at(WorkerStatus.State.OUTSIDE_SUBSET),
                at(WorkerStatus.State.LACKS_REQUIREMENT));
    }

    private int at(WorkerStatus.State state) {
        return byState[state.ordinal()];
    }

    /** Compatible, rejected and outside-subset workers per version, by version. */
    SortedMap<String, Integer> histogram() {
        TreeMap<String, Integer> h = new TreeMap<>();
        perVersion.forEach((version, count) -> h.put(version, count[0]));
        return Collections.unmodifiableSortedMap(h);
    }

    /** The versions of the compatible workers. */
    Set<String> compatibleVersions() {
        return Collections.unmodifiableSet(compatiblePerVersion.keySet());
    }

    /** Whether {@code other} tallies the same (for assertions: an update must equal a count). */
    boolean sameAs(FleetTally other) {
        return Arrays.equals(states, other.states)
                && Arrays.equals(workers, 0, compatible, other.workers, 0, other.compatible)
                && Arrays.equals(endpoints, 0, compatible, other.endpoints, 0, other.compatible)
                && Arrays.equals(byState, other.byState)
                && histogram().equals(other.histogram()) && compatibleVersions().equals(other.compatibleVersions());
    }

    /** Whether a worker in {@code state} is in the histogram: it answered and the policy had its say. */
    private static boolean answered(WorkerStatus.State state) {
        return state == WorkerStatus.State.COMPATIBLE || state == WorkerStatus.State.REJECTED
                || state == WorkerStatus.State.OUTSIDE_SUBSET || state == WorkerStatus.State.LACKS_REQUIREMENT;
    }

    /** A tally being made. */
    private static final class Builder {
        final byte[] states;
        WorkerInfo[] workers;
        WorkerEndpoint[] endpoints;
        int compatible;
        final int[] byState;
        final Map<String, int[]> perVersion;
        final Map<String, int[]> compatiblePerVersion;
        private String runVersion;             // workers of one version tend to come in runs
        private int[] runCount;
        private String compatibleRunVersion;
        private int[] compatibleRunCount;

        /** A tally of {@code size} statuses, with room for {@code room} compatible ones before its arrays grow. */
        Builder(int size, int room, int[] byState, Map<String, int[]> perVersion,
                Map<String, int[]> compatiblePerVersion) {
            this.states = new byte[size];
            this.workers = new WorkerInfo[room];
            this.endpoints = new WorkerEndpoint[room];
            this.byState = byState;
            this.perVersion = perVersion;
            this.compatiblePerVersion = compatiblePerVersion;
        }

        /** {@code s} is the status at {@code i}: counted, and listed when compatible. */
        void add(int i, WorkerStatus s) {
            WorkerStatus.State state = s.state();
            states[i] = (byte) state.ordinal();
            byState[state.ordinal()]++;
            if (answered(state)) {
                WorkerInfo info = s.info().orElseThrow();
                String version = info.version();
                if (version != runVersion) {
                    runVersion = version;
                    runCount = perVersion.computeIfAbsent(version, v -> new int[1]);
                }
                runCount[0]++;
                if (state == WorkerStatus.State.COMPATIBLE) {
                    list(info, s.endpoint());
                    if (version != compatibleRunVersion) {
                        compatibleRunVersion = version;
                        compatibleRunCount = compatiblePerVersion.computeIfAbsent(version, v -> new int[1]);
                    }
                    compatibleRunCount[0]++;
                }
            }
        }

        /** Lists a compatible worker after those listed so far; the arrays grow by half when full (never past the statuses). */
        void list(WorkerInfo info, WorkerEndpoint endpoint) {
            if (compatible == workers.length) {
                int grown = Math.min(states.length, Math.max(compatible + SPARE, compatible + (compatible >> 1)));
                workers = Arrays.copyOf(workers, grown);
                endpoints = Arrays.copyOf(endpoints, grown);
            }
            workers[compatible] = info;
            endpoints[compatible++] = endpoint;
        }

        /** {@code s}, counted with {@code state} before, is not among the statuses any more. */
        void remove(WorkerStatus s, byte state) {
            byState[state]--;
            WorkerStatus.State st = STATES[state];
            if (answered(st)) {
                String version = s.info().orElseThrow().version();
                lower(perVersion, version);
                if (st == WorkerStatus.State.COMPATIBLE) {
                    lower(compatiblePerVersion, version);
                }
                runVersion = null; // its count may be gone from the map
                compatibleRunVersion = null;
            }
        }

        private static void lower(Map<String, int[]> counts, String version) {
            int[] c = counts.get(version);
            if (--c[0] == 0) {
                counts.remove(version);
            }
        }

        FleetTally done() {
            // Trimmed only when much of the arrays is empty (a count of a fleet mostly not compatible, a
            // burst that grew them): a snapshot keeps them as long as it lives.
            int unused = workers.length - compatible;
            if (unused > SPARE + compatible / 8) {
                workers = Arrays.copyOf(workers, compatible);
                endpoints = Arrays.copyOf(endpoints, compatible);
            }
            return new FleetTally(states, workers, endpoints, compatible, byState, perVersion, compatiblePerVersion);
        }
    }
}
