package dev.rollcall.api.discovery;

import dev.rollcall.api.WorkerEndpoint;
import java.util.AbstractSet;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * An immutable candidate set, at most one endpoint per URL, that remembers how it was made from the
 * sets before it: {@link #with} and {@link #without} make the next set in about the square root of
 * its size, and {@link #changesSince} tells a reader which URLs changed between two of them without
 * reading the rest. A backend that learns of one change at a time (a watch event) hands
 * {@link CandidateListener#onCandidates} one of these: it is still the complete, latest set, so the
 * listener's contract is unchanged, but the resolver applies only what changed (and copies
 * nothing), instead of comparing every candidate with what it tracks on every event.
 *
 * <p>How: the sets made from one another share a base map, and each holds a small overlay of what
 * changed since (copied per change). Once the overlay is as large as the square root of the base
 * (16 at least), the next change folds it in: a new base, read in full once, and the chain of
 * remembered changes starts over. So a change costs about {@code 2·√n} map operations amortised
 * (n the set's size), a lookup one or two, and the sets kept alive by a chain hold at most about
 * {@code n} overlay entries together.
 *
 * <p>Equal to any {@link Set} with the same endpoints (labels included), as {@link Set#equals}
 * says. Immutable and thread-safe; the mutators of {@link Set} throw
 * {@link UnsupportedOperationException}. Null endpoints are refused.
 */
public final class CandidateSet extends AbstractSet<WorkerEndpoint> {

    private static final CandidateSet EMPTY = new CandidateSet(Map.of(), Map.of(), 0, 0, null, null);
    private static final int MIN_OVERLAY = 16;

    /** By URL; shared by every set of one chain, never changed. */
    private final Map<String, WorkerEndpoint> base;
    /** By URL, what changed since {@link #base}: an endpoint, or {@code null} for a URL removed. */
    private final Map<String, WorkerEndpoint> overlay;
    private final int size;
    /** {@link Set#hashCode()}: the sum of the endpoints' hashes, kept as the set changes. */
    private final int hash;
    /** The set this one was made from by one change, or null where the chain starts. */
    private final CandidateSet parent;
    /** The URL of that change. */
    private final String changedUrl;

    private CandidateSet(Map<String, WorkerEndpoint> base, Map<String, WorkerEndpoint> overlay, int size, int hash,
                         CandidateSet parent, String changedUrl) {
        this.base = base;
        this.overlay = overlay;
        this.size = size;
        this.hash = hash;
        this.parent = parent;
        this.changedUrl = changedUrl;
    }

    /** The empty set. */
    public static CandidateSet of() {
        return EMPTY;
    }

    /**
     * A set of {@code endpoints}, which must name each URL once.
     *
     * @throws IllegalArgumentException naming the URL that two endpoints share
     * @throws NullPointerException if {@code endpoints} or one of them is null
     */
    public static CandidateSet of(Collection<WorkerEndpoint> endpoints) {
        if (endpoints instanceof CandidateSet set) {
            return set;
        }
        Map<String, WorkerEndpoint> byUrl = new HashMap<>(Math.max(16, endpoints.size() * 4 / 3 + 1));
        int hash = 0;
        for (WorkerEndpoint e : endpoints) {
            Objects.requireNonNull(e, "endpoint");
            if (byUrl.putIfAbsent(e.url(), e) != null) {
                throw new IllegalArgumentException("two candidates name " + e.url() + ": a candidate set has one per URL");
            }
            hash += e.hashCode();
        }
        return byUrl.isEmpty() ? EMPTY : new CandidateSet(byUrl, Map.of(), byUrl.size(), hash, null, null);
    }

    /** The endpoint this set has for {@code url}, if any. */
    public Optional<WorkerEndpoint> get(String url) {
        return Optional.ofNullable(find(url));
    }

    private WorkerEndpoint find(String url) {
        if (overlay.containsKey(url)) {
            return overlay.get(url);
        }
        return base.get(url);
    }

    /**
     * This set with {@code endpoint} in place of whatever it had for its URL; this very set when it
     * already has that endpoint (labels included), so that {@code ==} says whether anything changed.
     */
    public CandidateSet with(WorkerEndpoint endpoint) {
        Objects.requireNonNull(endpoint, "endpoint");
        WorkerEndpoint now = find(endpoint.url());
        if (endpoint.equals(now)) {
            return this;
        }
        return change(endpoint.url(), endpoint, now == null ? size + 1 : size,
                hash - (now == null ? 0 : now.hashCode()) + endpoint.hashCode());
    }

    /** This set without an endpoint for {@code url}; this very set when it has none. */
    public CandidateSet without(String url) {
        Objects.requireNonNull(url, "url");
        WorkerEndpoint now = find(url);
        if (now == null) {
            return this;
        }
        return change(url, null, size - 1, hash - now.hashCode());
    }

    private CandidateSet change(String url, WorkerEndpoint endpoint, int newSize, int newHash) {
        if (overlay.size() + 1 > Math.max(MIN_OVERLAY, (int) Math.sqrt(base.size()))) {
            // Fold the overlay in: a new base, and the remembered changes start over here.
            Map<String, WorkerEndpoint> folded = new HashMap<>(Math.max(16, newSize * 4 / 3 + 1));
            for (WorkerEndpoint e : this) {
                folded.put(e.url(), e);
            }
            if (endpoint == null) {
                folded.remove(url);
            } else {
                folded.put(url, endpoint);
            }
            return newSize == 0 ? EMPTY : new CandidateSet(folded, Map.of(), newSize, newHash, null, null);
        }
        Map<String, WorkerEndpoint> next = new HashMap<>(overlay);
        if (endpoint == null && !base.containsKey(url)) {
            next.remove(url);               // added since the base and removed again: nothing left to say
        } else {
            next.put(url, endpoint);
        }
        return new CandidateSet(base, next, newSize, newHash, this, url);
    }

    /**
     * The URLs whose endpoint differs between {@code earlier} and this set (added, removed or
     * relabelled; a URL changed and changed back may be among them), when this set was made from
     * {@code earlier} by {@link #with} and {@link #without} since the chain last started over;
     * empty when it was not, and the reader must compare the whole sets. Costs the number of
     * changes between the two.
     */
    public Optional<Set<String>> changesSince(CandidateSet earlier) {
        Objects.requireNonNull(earlier, "earlier");
        if (earlier == this) {
            return Optional.of(Set.of());
        }
        if (earlier.base != base) {
            return Optional.empty();
        }
        Set<String> urls = new HashSet<>();
        for (CandidateSet s = this; s != earlier; s = s.parent) {
            if (s == null) {
                return Optional.empty(); // earlier is not an ancestor (another branch of one base)
            }
            urls.add(s.changedUrl);
        }
        return Optional.of(urls);
    }

    /**
     * As {@link Set#equals}; between two sets of one chain it reads only the URLs that changed
     * between them.
     */
    @Override
    public boolean equals(Object o) {
        if (o == this) {
            return true;
        }
        if (o instanceof CandidateSet other) {
            if (other.size != size || other.hash != hash) {
                return false;
            }
            Set<String> urls = changesSince(other).or(() -> other.changesSince(this)).orElse(null);
            if (urls != null) {
                for (String url : urls) {
                    if (!Objects.equals(find(url), other.find(url))) {
                        return false;
                    }
                }
                return true;
            }
        }
        return super.equals(o);
    }

    /** As {@link Set#hashCode}, kept as the set changes: no pass over the endpoints. */
    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public boolean contains(Object o) {
        return o instanceof WorkerEndpoint e && e.equals(find(e.url()));
    }

    @Override
    public Iterator<WorkerEndpoint> iterator() {
        return new Iterator<>() {
            private final Iterator<WorkerEndpoint> fromBase = base.values().iterator();
            private final Iterator<WorkerEndpoint> fromOverlay = overlay.values().iterator();
            private WorkerEndpoint next = advance();

            private WorkerEndpoint advance() {
                while (fromBase.hasNext()) {
                    WorkerEndpoint e = fromBase.next();
                    if (!overlay.containsKey(e.url())) {
                        return e;
                    }
                }
                while (fromOverlay.hasNext()) {
                    WorkerEndpoint e = fromOverlay.next();
                    if (e != null) {
                        return e;
                    }
                }
                return null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public WorkerEndpoint next() {
                WorkerEndpoint e = next;
                if (e == null) {
                    throw new NoSuchElementException();
                }
                next = advance();
                return e;
            }
        };
    }
}
