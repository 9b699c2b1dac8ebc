package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.CandidateSet;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.settings.ResolverSettings;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Hands a backend's news to the tracker with watch-channel semantics: only the latest candidate set
 * matters, so a burst of sets while the serial context is busy is applied once, as the newest; an
 * error that came after it is applied after it.
 *
 * <p>A set of more than {@code rollcall.discovery.max-candidates} is refused whole, before it is
 * copied: it reaches the tracker as a discovery failure that says how many and names the key, so the
 * last good set is kept (stale) and nothing of the oversized one is tracked or probed.
 *
 * <p>{@link #onCandidates} and {@link #onError} are called on the backend's threads and never block;
 * the news is applied on the serial context.
 */
public final class DiscoveryFeed implements CandidateListener {

    /** A candidate set over the limit, as the discovery failure the tracker reports (its text is the whole story). */
    static final class TooManyCandidates extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TooManyCandidates(int size, int max) {
            super("discovery listed " + size + " candidates, more than " + ResolverSettings.MAX_CANDIDATES_KEY + " (" + max
                    + "): the set is refused whole and the last good set kept");
        }

        @Override
        public String toString() {
            return getMessage();
        }
    }

    /** The latest unapplied news: a set (or none), and whether an error came after it. */
    private record News(Set<WorkerEndpoint> candidates, Throwable errorAfter) {
    }

    private final SerialContext context;
    private final FleetTracker tracker;
    private final AtomicReference<News> pending = new AtomicReference<>();
    private final int maxCandidates;

    public DiscoveryFeed(SerialContext context, FleetTracker tracker, int maxCandidates) {
        this.context = context;
        this.tracker = tracker;
        this.maxCandidates = maxCandidates;
    }

    @Override
    public void onCandidates(Set<WorkerEndpoint> latest) {
        int size = latest.size();
        if (size > maxCandidates) {
            onError(new TooManyCandidates(size, maxCandidates));
            return;
        }
        // A CandidateSet is immutable and says what changed since the set applied before (the etcd and ZooKeeper
        // backends hand one): no copy per event. Set.copyOf keeps any other immutable set as it is.
        Set<WorkerEndpoint> set = latest instanceof CandidateSet candidates ? candidates : Set.copyOf(latest);
        if (pending.getAndSet(new News(set, null)) == null) {
            context.execute(this::apply);
        }
    }

    @Override
    public void onError(Throwable cause) {
        if (pending.getAndUpdate(p -> new News(p == null ? null : p.candidates(), cause)) == null) {
            context.execute(this::apply);
        }
    }

    /** Applies the newest news; older sets that were replaced meanwhile are skipped. */
    private void apply() {
        News news = pending.getAndSet(null);
        if (news == null) {
            return;
        }
        if (news.candidates() != null) {
            tracker.applyCandidates(news.candidates());
        }
        if (news.errorAfter() != null) {
            tracker.discoveryFailed(news.errorAfter());
        }
    }
}
