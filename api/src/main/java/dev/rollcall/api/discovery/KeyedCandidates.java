package dev.rollcall.api.discovery;

import dev.rollcall.api.WorkerEndpoint;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * The candidates of a registry that names each worker by a key (an etcd key, a ZooKeeper node), kept
 * up to date one key at a time, with the {@link CandidateSet} to hand the resolver always at hand:
 * {@link #put} and {@link #remove} cost about the square root of the fleet's size, not the fleet
 * (a backend that rebuilt its whole set on each watch event spent that on every event, and the
 * resolver as much again to compare it).
 *
 * <p>Two keys may name one URL (a worker registered again under a new key before the old one
 * expired): the URL is listed once, with the endpoint of the smallest key in {@link String} order,
 * until that key goes.
 *
 * <p>Not thread-safe: confine it to the backend's thread, as its other state. The sets it hands
 * out are immutable and may go to any thread.
 */
public final class KeyedCandidates {

    private final Map<String, WorkerEndpoint> byKey = new HashMap<>();
    /** By URL, its key, or a {@code TreeSet<String>} of its keys while several name it. */
    private final Map<String, Object> keysByUrl = new HashMap<>();
    private CandidateSet candidates = CandidateSet.of();

    /** The complete, current set: one endpoint per URL. */
    public CandidateSet candidates() {
        return candidates;
    }

    /** How many keys name a candidate. */
    public int keys() {
        return byKey.size();
    }

    /** The endpoint under {@code key}, or null. */
    public WorkerEndpoint get(String key) {
        return byKey.get(key);
    }

    /** {@code key} names {@code endpoint} now; returns whether {@link #candidates()} changed. */
    public boolean put(String key, WorkerEndpoint endpoint) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(endpoint, "endpoint");
        CandidateSet before = candidates;
        WorkerEndpoint old = byKey.put(key, endpoint);
        if (old != null && !old.url().equals(endpoint.url())) {
            forget(old.url(), key);
            list(old.url());
        }
        if (old == null || !old.url().equals(endpoint.url())) {
            remember(endpoint.url(), key);
        }
        list(endpoint.url());
        return candidates != before;
    }

    /** {@code key} names nothing now; returns whether {@link #candidates()} changed. */
    public boolean remove(String key) {
        WorkerEndpoint old = byKey.remove(key);
        if (old == null) {
            return false;
        }
        CandidateSet before = candidates;
        forget(old.url(), key);
        list(old.url());
        return candidates != before;
    }

    /**
     * Replaces everything with {@code byKey} (a full read of the registry); returns whether
     * {@link #candidates()} changed. The set it makes starts a new chain: the resolver compares it
     * with what it tracks in full, once.
     */
    public boolean replaceAll(Map<String, WorkerEndpoint> entries) {
        CandidateSet before = candidates;
        byKey.clear();
        keysByUrl.clear();
        Map<String, WorkerEndpoint> byUrl = new HashMap<>();
        for (Map.Entry<String, WorkerEndpoint> e : entries.entrySet()) {
            String key = Objects.requireNonNull(e.getKey(), "key");
            WorkerEndpoint endpoint = Objects.requireNonNull(e.getValue(), "endpoint");
            byKey.put(key, endpoint);
            remember(endpoint.url(), key);
        }
        for (String url : keysByUrl.keySet()) {
            byUrl.put(url, byKey.get(firstKey(url)));
        }
        CandidateSet read = CandidateSet.of(byUrl.values());
        candidates = read.equals(before) ? before : read;
        return candidates != before;
    }

    /** Forgets every key; returns whether {@link #candidates()} changed. */
    public boolean clear() {
        return replaceAll(Map.of());
    }

    /** Lists {@code url} with its first key's endpoint, or not at all if no key names it. */
    private void list(String url) {
        String first = firstKey(url);
        candidates = first == null ? candidates.without(url) : candidates.with(byKey.get(first));
    }

    private String firstKey(String url) {
        Object keys = keysByUrl.get(url);
        if (keys instanceof String key) {
            return key;
        }
        @SuppressWarnings("unchecked")
        TreeSet<String> several = (TreeSet<String>) keys;
        return several == null ? null : several.first();
    }

    private void remember(String url, String key) {
        Object keys = keysByUrl.get(url);
        if (keys == null) {
            keysByUrl.put(url, key);
        } else if (keys instanceof String one) {
            if (!one.equals(key)) {
                TreeSet<String> several = new TreeSet<>();
                several.add(one);
                several.add(key);
                keysByUrl.put(url, several);
            }
        } else {
            @SuppressWarnings("unchecked")
            TreeSet<String> several = (TreeSet<String>) keys;
            several.add(key);
        }
    }

    private void forget(String url, String key) {
        Object keys = keysByUrl.get(url);
        if (keys instanceof String one) {
            if (one.equals(key)) {
                keysByUrl.remove(url);
            }
        } else if (keys != null) {
            @SuppressWarnings("unchecked")
            TreeSet<String> several = (TreeSet<String>) keys;
            several.remove(key);
            if (several.size() == 1) {
                keysByUrl.put(url, several.first());
            }
        }
    }
}
