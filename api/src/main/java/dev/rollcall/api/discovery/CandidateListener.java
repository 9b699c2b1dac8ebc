package dev.rollcall.api.discovery;

import dev.rollcall.api.WorkerEndpoint;
import java.util.Set;

/**
 * Receives what a {@link WorkerDiscovery} knows, from the backend's own threads.
 *
 * <p>Both methods are cheap and never block: the resolver only records the call and handles it on
 * its own thread. They may be called from any thread, concurrently; the resolver keeps the call
 * that arrived last.
 */
public interface CandidateListener {

    /**
     * The complete, current set of candidate workers. Each call replaces the previous one entirely
     * (latest wins): a backend never sends deltas, so a skipped call loses nothing. An empty set
     * means there are no candidates. Endpoints are identified by {@link WorkerEndpoint#url()}.
     * The resolver refuses a set larger than its {@code rollcall.discovery.max-candidates} (by its
     * {@code size()}, without reading it) as it would an {@link #onError}: the last good set stays.
     *
     * <p>A backend that learns of one change at a time (a watch event) hands a {@link CandidateSet}
     * made from the one it handed before ({@link CandidateSet#with}, {@link CandidateSet#without},
     * or {@link KeyedCandidates} for a registry of keys): it is still the whole set, but the
     * resolver then reads only the URLs that changed since the set it applied last, sets skipped in
     * between included, and copies nothing. Any other set is copied and compared in full.
     */
    void onCandidates(Set<WorkerEndpoint> latest);

    /**
     * The backend cannot currently tell the candidates (server unreachable, watch broken). This is
     * transient: the resolver keeps serving the last good set and marks it stale until the next
     * {@link #onCandidates}. The backend keeps trying to recover on its own.
     */
    void onError(Throwable cause);
}
