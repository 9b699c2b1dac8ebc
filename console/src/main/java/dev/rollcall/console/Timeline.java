package dev.rollcall.console;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetEvent;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The console's memory of the snapshots it has shown: the last {@code capacity} of them with what
 * changed from the one before, and since when each draining worker has been draining. Written by the
 * console's sender thread alone ({@link #record}); read by request threads through
 * {@link #entries()} (a copy) and {@link #drainingSince}. A snapshot the console skipped (latest
 * wins) is folded into the next one's changes.
 */
final class Timeline {

    /** At most this many changes are listed per entry; the rest are counted. */
    static final int MAX_CHANGES = 12;

    /** One snapshot as the timeline shows it. */
    record Entry(long snapshot, Instant at, String counts, List<String> changes, int more) {
    }

    private final int capacity;
    private final ArrayDeque<Entry> entries;
    private final Map<String, Instant> drainingSince = new ConcurrentHashMap<>();
    private FleetSnapshot last;

    Timeline(int capacity) {
        this.capacity = capacity;
        this.entries = new ArrayDeque<>(capacity);
    }

    /** Adds {@code snapshot} unless it is not newer than the last one recorded. */
    void record(FleetSnapshot snapshot) {
        if (last != null && snapshot.number() <= last.number()) {
            return;
        }
        List<String> changes = new ArrayList<>();
        int more = 0;
        if (last != null) {
            for (FleetEvent event : FleetEvent.between(last, snapshot)) {
                if (changes.size() < MAX_CHANGES) {
                    changes.add(describe(event));
                } else {
                    more++;
                }
            }
        } else {
            changes.add("first snapshot the console saw");
        }
        if (snapshot.staleSince().isPresent() && (last == null || last.staleSince().isEmpty())) {
            changes.add(0, "discovery failing since " + snapshot.staleSince().get());
        } else if (snapshot.staleSince().isEmpty() && last != null && last.staleSince().isPresent()) {
            changes.add(0, "discovery healthy again");
        }
        for (WorkerStatus s : snapshot.statuses()) {
            if (s.state() == WorkerStatus.State.DRAINING) {
                drainingSince.putIfAbsent(s.endpoint().url(), snapshot.publishedAt());
            }
        }
        if (!drainingSince.isEmpty()) {
            drainingSince.keySet().removeIf(url -> snapshot.status(url)
                    .map(s -> s.state() != WorkerStatus.State.DRAINING).orElse(true));
        }
        synchronized (entries) {
            if (entries.size() == capacity) {
                entries.removeFirst();
            }
            entries.addLast(new Entry(snapshot.number(), snapshot.publishedAt(), snapshot.counts().toString(),
                    List.copyOf(changes), more));
        }
        last = snapshot;
    }

    /** The entries, oldest first (a copy). */
    List<Entry> entries() {
        synchronized (entries) {
            return List.copyOf(entries);
        }
    }

    /** When the console first saw {@code url} draining, while it still drains; null otherwise. */
    Instant drainingSince(String url) {
        return drainingSince.isEmpty() ? null : drainingSince.get(url);
    }

    private static String describe(FleetEvent event) {
        if (event instanceof FleetEvent.WorkerJoined e) {
            return "joined " + e.worker().endpoint().url() + " (" + shownVersion(e.worker().version()) + ")";
        } else if (event instanceof FleetEvent.WorkerLeft e) {
            return "left " + e.endpoint().url() + ": " + withoutRepeatedState(e.reason());
        } else if (event instanceof FleetEvent.WorkerRejected e) {
            return "rejected " + e.worker().endpoint().url() + ": " + e.reason();
        } else if (event instanceof FleetEvent.WorkerDraining e) {
            return "draining " + e.endpoint().url();
        } else if (event instanceof FleetEvent.WorkerResumed e) {
            return "resumed " + e.endpoint().url();
        } else if (event instanceof FleetEvent.WorkerDamped e) {
            return "damped " + e.endpoint().url() + " (flapping; its rejection says until when)";
        } else if (event instanceof FleetEvent.WorkerUndamped e) {
            return "undamped " + e.endpoint().url();
        } else if (event instanceof FleetEvent.VersionClaimDiffers e) {
            return "version " + e.endpoint().url() + ": " + e.description();
        } else if (event instanceof FleetEvent.CohortSwitched e) {
            return "cohort " + e.from().orElse("(none)") + " \u2192 " + e.to().orElse("(none)")
                    + (e.explanation().isEmpty() ? "" : ": " + e.explanation());
        }
        return event.toString();
    }

    /** {@code "draining: draining: finishing ..."} (the state, then a reason that names it) → {@code "draining: finishing ..."}. */
    private static String withoutRepeatedState(String reason) {
        int colon = reason.indexOf(": ");
        if (colon > 0 && reason.startsWith(reason.substring(0, colon) + ":", colon + 2)) {
            return reason.substring(colon + 2);
        }
        return reason;
    }

    private static String shownVersion(String version) {
        return version.isEmpty() ? WorkerInfo.NO_VERSION : version;
    }
}
