package dev.rollcall.server.internal.grpc;

import dev.rollcall.api.Requirements;
import dev.rollcall.api.registry.FleetSnapshot;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The fleet service's answers to requests with requirements: each snapshot narrowed to one set of
 * {@link Requirements} ({@link FleetSnapshot#requiring}) and encoded once for every stream and call
 * that asks for the same set. Watchers of one set share a {@link Feed}: one narrowing, one encoding
 * and one change message per publish however many they are; a feed lives while it has watchers.
 * GetFleet and HoldFleet take a feed's encoding when it is of the number they answer with, else one
 * from a small cache of the latest narrowings (at most {@value #MAX_CACHED} sets), else their own.
 *
 * <p>Thread-safe. {@link #publish} runs on the resolver's listener thread; the rest on any.
 */
final class NarrowedFeeds {

    /** Sets of requirements whose latest narrowing is kept for GetFleet and HoldFleet beyond the feeds. */
    static final int MAX_CACHED = 64;

    /**
     * One set of requirements' stream of encodings and the watches that follow it. Each snapshot it
     * encodes is newer than the last (so its change messages are against the one encoded before).
     */
    static final class Feed {
        private final Requirements requirements;
        private final SnapshotEncoder encoder;
        private final Set<FleetWatch> watches = ConcurrentHashMap.newKeySet();
        private EncodedSnapshot current; // guarded by this
        private int streams; // guarded by the feeds' map entry

        private Feed(Requirements requirements, String instanceId) {
            this.requirements = requirements;
            this.encoder = new SnapshotEncoder(instanceId);
        }

        Requirements requirements() {
            return requirements;
        }

        /** {@code published} narrowed and encoded, or the newer encoding this feed already has. */
        synchronized EncodedSnapshot at(FleetSnapshot published) {
            if (current == null || published.number() > current.number()) {
                current = encoder.encode(published.requiring(requirements));
            }
            return current;
        }

        /** The encoding of snapshot {@code number}, if it is the one this feed holds; else null. */
        private synchronized EncodedSnapshot exactly(long number) {
            return current != null && current.number() == number ? current : null;
        }

        void add(FleetWatch watch) {
            watches.add(watch);
        }

        void remove(FleetWatch watch) {
            watches.remove(watch);
        }
    }

    private final String instanceId;
    private final SnapshotEncoder alone;
    private final ConcurrentHashMap<Requirements, Feed> feeds = new ConcurrentHashMap<>();
    private final Map<Requirements, EncodedSnapshot> cached = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Requirements, EncodedSnapshot> eldest) {
            return size() > MAX_CACHED;
        }
    }; // guarded by itself

    NarrowedFeeds(String instanceId) {
        this.instanceId = instanceId;
        this.alone = new SnapshotEncoder(instanceId);
    }

    /** The feed of {@code requirements} (not none) for one more watch; {@link #leave} it once when the watch ends. */
    Feed join(Requirements requirements) {
        return feeds.compute(requirements, (r, feed) -> {
            Feed joined = feed != null ? feed : new Feed(r, instanceId);
            joined.streams++;
            return joined;
        });
    }

    /** One watch of {@code feed} ended; the last one ends the feed. */
    void leave(Feed feed) {
        feeds.computeIfPresent(feed.requirements, (r, f) -> f != feed || --f.streams > 0 ? f : null);
    }

    /** On the resolver's listener thread: each feed narrows and encodes {@code published} once for its watches. */
    void publish(FleetSnapshot published) {
        for (Feed feed : feeds.values()) {
            EncodedSnapshot encoded = feed.at(published);
            for (FleetWatch watch : feed.watches) {
                watch.offer(encoded);
            }
        }
    }

    /** {@code snapshot} (as published, not narrowed) narrowed to {@code requirements} and encoded, whole. */
    EncodedSnapshot of(FleetSnapshot snapshot, Requirements requirements) {
        Feed feed = feeds.get(requirements);
        EncodedSnapshot encoded = feed != null ? feed.exactly(snapshot.number()) : null;
        if (encoded != null) {
            return encoded;
        }
        synchronized (cached) {
            encoded = cached.get(requirements);
        }
        if (encoded != null && encoded.number() == snapshot.number()) {
            return encoded;
        }
        // Outside the lock: two callers of one new number may both encode it; neither waits on the other.
        EncodedSnapshot fresh = alone.encodeAlone(snapshot.requiring(requirements));
        synchronized (cached) {
            EncodedSnapshot had = cached.get(requirements);
            if (had == null || had.number() < fresh.number()) {
                cached.put(requirements, fresh);
            }
        }
        return fresh;
    }

    /** Ends every watch of every feed with {@code status} (the service stops). */
    void close(io.grpc.Status status) {
        for (Feed feed : feeds.values()) {
            for (FleetWatch watch : feed.watches) {
                watch.close(status);
            }
        }
    }

    /** How many feeds are open (distinct sets of requirements being watched). */
    int feeds() {
        return feeds.size();
    }
}
