package dev.rollcall.core.internal.fleet;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The workers a {@link FleetTracker} tracks, by URL: in URL order for snapshot builds, hashed for
 * lookups. Confined to the resolver's serial context, as the tracker that owns it.
 */
final class TrackedWorkers {

    /** By URL, in URL order: snapshots list workers in that order, so no snapshot sorts them again. */
    private final TreeMap<String, TrackedWorker> inOrder = new TreeMap<>();
    /**
     * The same by URL, for lookups: every probe answer and every candidate of every set from
     * discovery is looked up, and a tree lookup compares a dozen URLs where a hash compares one.
     */
    private final Map<String, TrackedWorker> byUrl = new HashMap<>();
    /** {@link #inOrder}'s workers in URL order, for builds; null after the set of workers changed. */
    private List<TrackedWorker> ordered;

    /** The worker tracked at {@code url}, or null. */
    TrackedWorker get(String url) {
        return byUrl.get(url);
    }

    void add(TrackedWorker t) {
        inOrder.put(t.url(), t);
        byUrl.put(t.url(), t);
        ordered = null;
    }

    void remove(TrackedWorker t) {
        inOrder.remove(t.url());
        byUrl.remove(t.url());
        ordered = null;
    }

    /** The tracked workers in URL order, a copy kept until the set changes. */
    List<TrackedWorker> ordered() {
        if (ordered == null) {
            ordered = List.copyOf(inOrder.values());
        }
        return ordered;
    }

    /** The tracked workers in URL order, live: not to be changed while iterated. */
    Collection<TrackedWorker> values() {
        return inOrder.values();
    }

    int size() {
        return inOrder.size();
    }

    void clear() {
        inOrder.clear();
        byUrl.clear();
        ordered = null;
    }
}
