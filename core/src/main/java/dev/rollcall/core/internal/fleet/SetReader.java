package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Reads each candidate set from discovery against the tracked workers, reading as little as the
 * set allows, and says who left. Three ways, cheapest first:
 *
 * <ol>
 *   <li>a {@link CandidateSet} made from the one applied last (etcd, ZooKeeper): only the URLs it
 *       says changed;</li>
 *   <li>any other set, when the one applied last named each URL once: against that set, by the
 *       sets' own lookups, so that only the endpoints one of them lacks are read (a set of 10,000 in
 *       which 100 changed reads 200 workers, not every worker twice, on the thread the churn's first
 *       answers wait for);</li>
 *   <li>whole: every endpoint of the set, then every tracked worker not listed in it.</li>
 * </ol>
 *
 * <p>All three end in the same tracked workers. The second counts before it takes anyone out: if
 * the tracked workers left would not be as many as the set's endpoints (the set names a URL twice,
 * with other labels), nobody is taken out and the set is read whole, which lists both and warns.
 *
 * <p>Confined to the resolver's serial context, as the tracker that owns it.
 */
final class SetReader {

    /** What the tracker does with an endpoint that may be new or relabelled, in set number {@code set}. */
    interface Listing {
        void listed(WorkerEndpoint endpoint, long set);
    }

    private final TrackedWorkers tracked;
    /** Counts the sets read: a worker's {@link TrackedWorker#seenInSet()} says which set last listed it. */
    private long sets;
    /** The set applied last (discovery's or the cache file's), or null. */
    private Set<WorkerEndpoint> applied;
    /** Whether {@link #applied} named every URL once, as the tracked workers do. */
    private boolean appliedDistinct;
    /** For tests: every set read whole, the reference the other two ways must end at. */
    private boolean alwaysWhole;
    private long wholeSetsRead;

    SetReader(TrackedWorkers tracked) {
        this.tracked = tracked;
    }

    /**
     * Reads {@code latest}: hands {@code listing} each endpoint that may be new or relabelled (every
     * one, when read whole) and returns the tracked workers it no longer lists (empty: none), which
     * the caller takes out.
     */
    List<TrackedWorker> read(Set<WorkerEndpoint> latest, Listing listing) {
        Set<WorkerEndpoint> before = applied;
        applied = latest;
        long set = ++sets;
        List<TrackedWorker> left = null;
        if (!alwaysWhole && latest instanceof CandidateSet now && before instanceof CandidateSet was) {
            left = changes(now, was, set, listing);
        }
        if (left == null && !alwaysWhole && before != null && appliedDistinct) {
            left = against(before, latest, set, listing);
        }
        if (left == null) {
            left = whole(latest, set, listing);
        }
        appliedDistinct = tracked.size() - left.size() == latest.size();
        return left;
    }

    /** What changed since {@code was}, if {@code now} is made from it; null if not. */
    private List<TrackedWorker> changes(CandidateSet now, CandidateSet was, long set, Listing listing) {
        Set<String> changed = now.changesSince(was).orElse(null);
        if (changed == null) {
            return null;
        }
        List<TrackedWorker> left = new ArrayList<>();
        for (String url : changed) {
            WorkerEndpoint e = now.get(url).orElse(null);
            if (e != null) {
                listing.listed(e, set);
            } else {
                TrackedWorker gone = tracked.get(url);
                if (gone != null) {
                    left.add(gone);
                }
            }
        }
        return left;
    }

    /** {@code latest} against {@code before} (which named each URL once); null if the counts disagree. */
    private List<TrackedWorker> against(Set<WorkerEndpoint> before, Set<WorkerEndpoint> latest, long set,
                                        Listing listing) {
        if (latest == before) {
            return new ArrayList<>(); // the same set again: nothing changed
        }
        for (WorkerEndpoint e : latest) {
            if (!before.contains(e)) {
                listing.listed(e, set); // new, or a URL listed with other labels
            }
        }
        List<TrackedWorker> left = new ArrayList<>();
        for (WorkerEndpoint e : before) {
            if (!latest.contains(e)) {
                TrackedWorker t = tracked.get(e.url());
                if (t != null && t.seenInSet() != set) { // not listed again above under other labels
                    left.add(t);
                }
            }
        }
        return tracked.size() - left.size() == latest.size() ? left : null;
    }

    /** Every endpoint of {@code latest}, then every tracked worker it did not list. */
    private List<TrackedWorker> whole(Set<WorkerEndpoint> latest, long set, Listing listing) {
        wholeSetsRead++;
        for (WorkerEndpoint e : latest) {
            listing.listed(e, set);
        }
        List<TrackedWorker> left = new ArrayList<>();
        for (TrackedWorker t : tracked.values()) {
            if (t.seenInSet() != set) {
                left.add(t);
            }
        }
        return left;
    }

    /** For tests: reads every set whole from now on. */
    void readEverySetWhole() {
        alwaysWhole = true;
    }

    /** How many sets were read whole (every tracked worker): for tests. */
    long wholeSetsRead() {
        return wholeSetsRead;
    }
}
