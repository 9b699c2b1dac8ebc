package dev.rollcall.worker;

import dev.rollcall.api.PeerText;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The coordinators that hold a worker (exact drain): the {@code WatchWorkerInfo} streams opened
 * with a {@code holder_id}, and which holder ids released the worker during the current drain. A
 * stream holds the worker until its holder id sends {@code ReleaseWorker} during the drain or the
 * stream ends (cancelled, connection broken): a coordinator whose stream breaks counts as released.
 * A release holds for every stream of its id, present and later, until the drain ends (a resume),
 * so that a coordinator that watches anew does not hold the worker again. What ended each hold is
 * kept for the close's log line.
 *
 * <p>A release is taken only from an id that holds something here: one with an open stream, or
 * one this drain already released. Any other is {@link Release#HOLDS_NOTHING} and leaves no trace,
 * so that strangers' releases cannot fill the released set. A holder id is a coordinator's secret
 * for this worker (who knows it can release it): no log line or error holds one whole, only its
 * {@link #tag}.
 *
 * <p>Not thread-safe: {@link WorkerInfoService} owns it and calls it under its own lock.
 */
final class Holders {

    /** The longest holder id, in characters. */
    static final int MAX_ID_CHARS = 64;
    /** How many leading characters of an id {@link #tag} keeps: enough to tell a few holders apart. */
    static final int TAG_CHARS = 6;
    /** How many ends of holds the close's log line lists; the rest are counted. */
    private static final int MAX_LOGGED = 16;

    private record Holder(String id, String peer, long openedNanos) {
        String describe() {
            return "'" + tag(id) + "' from " + PeerText.escape(peer);
        }
    }

    /**
     * What a log line or an error may say of holder id {@code id}: at most its first
     * {@value #TAG_CHARS} characters (half of a short one), escaped, then {@code …}.
     */
    static String tag(String id) {
        return PeerText.escape(id.substring(0, Math.min(TAG_CHARS, id.length() / 2)), TAG_CHARS) + "…";
    }

    private final Map<WatchStream, Holder> open = new HashMap<>();
    private final Set<String> released = new HashSet<>();
    private final List<String> ends = new ArrayList<>();
    private final int maxReleased;
    private int endsNotLogged;
    private boolean draining;
    private long drainNanos;

    /** {@code maxReleased}: the most holder ids one drain keeps as released (the watch limit, which bounds open streams). */
    Holders(int maxReleased) {
        this.maxReleased = maxReleased;
    }

    /**
     * Null when {@code id} is a valid holder id: 1 to {@value #MAX_ID_CHARS} printable ASCII
     * characters (U+0021 to U+007E); else what is wrong, naming the bound, the id escaped.
     */
    static String check(String field, String id) {
        boolean ok = !id.isEmpty() && id.length() <= MAX_ID_CHARS;
        for (int i = 0; ok && i < id.length(); i++) {
            char c = id.charAt(i);
            ok = c >= 0x21 && c <= 0x7e;
        }
        return ok ? null : field + " '" + PeerText.escape(id, MAX_ID_CHARS) + "' (" + id.length()
                + " characters) is not 1 to " + MAX_ID_CHARS + " printable ASCII characters (U+0021 to U+007E)";
    }

    /** Holder streams that hold the worker now: open, their id not released in this drain. */
    int holding() {
        int n = 0;
        for (Holder h : open.values()) {
            if (!released.contains(h.id())) {
                n++;
            }
        }
        return n;
    }

    /** Holder streams open now, released or not. */
    int streams() {
        return open.size();
    }

    void open(WatchStream stream, String id, String peer, long now) {
        open.put(stream, new Holder(id, peer, now));
    }

    /** The stream ended; returns whether that changed {@link #holding()}. */
    boolean end(WatchStream stream, long now) {
        Holder h = open.remove(stream);
        if (h == null || released.contains(h.id())) {
            return false;
        }
        if (draining) {
            note(h.describe() + ": its stream ended " + sinceDrain(now));
        }
        return true;
    }

    /** The outcome of a release. */
    enum Release { CHANGED, UNCHANGED, HOLDS_NOTHING }

    /**
     * {@code id} released the worker. {@link Release#HOLDS_NOTHING}: no stream of {@code id} is open
     * and this drain did not release it; nothing is kept. Outside a drain a release of an open
     * holder changes nothing (a serving worker is held again by every coordinator that publishes
     * it). At most {@code maxReleased} ids are kept: past it, those whose streams all ended are
     * forgotten (ids with open streams are fewer, as open streams are).
     */
    Release release(String id, long now) {
        if (released.contains(id)) {
            return Release.UNCHANGED;
        }
        if (!hasOpenStream(id)) {
            return Release.HOLDS_NOTHING;
        }
        if (!draining) {
            return Release.UNCHANGED;
        }
        if (released.size() >= maxReleased) {
            // Ids whose streams all ended hold nothing now; forgetting them costs a coordinator that
            // watches anew one more release, never the worker's stop.
            released.removeIf(r -> !hasOpenStream(r));
        }
        int before = holding();
        released.add(id);
        if (holding() == before) {
            return Release.UNCHANGED;
        }
        for (Holder h : open.values()) {
            if (h.id().equals(id)) {
                note(h.describe() + ": released " + sinceDrain(now));
                break;
            }
        }
        return Release.CHANGED;
    }

    private boolean hasOpenStream(String id) {
        for (Holder h : open.values()) {
            if (h.id().equals(id)) {
                return true;
            }
        }
        return false;
    }

    /** The worker began to drain at {@code now}. */
    void drainStarted(long now) {
        draining = true;
        drainNanos = now;
        released.clear();
        ends.clear();
        endsNotLogged = 0;
    }

    /** The worker takes work again: every holder holds it again. */
    void drainEnded() {
        draining = false;
        released.clear();
    }

    /** Every stream ended with the server (close). */
    void clear() {
        open.clear();
    }

    /** Who still holds the worker, each {@code 'tag…' from peer}. */
    List<String> stillHolding() {
        List<String> who = new ArrayList<>();
        for (Holder h : open.values()) {
            if (!released.contains(h.id())) {
                who.add(h.describe());
            }
        }
        return who;
    }

    /** What ended each hold during this drain, in order, and how long after the drain began. */
    String ends() {
        String listed = String.join("; ", ends);
        return endsNotLogged == 0 ? listed : listed + "; and " + endsNotLogged + " more";
    }

    private void note(String end) {
        if (ends.size() < MAX_LOGGED) {
            ends.add(end);
        } else {
            endsNotLogged++;
        }
    }

    private String sinceDrain(long now) {
        return TimeUnit.NANOSECONDS.toMillis(now - drainNanos) + " ms after the drain";
    }
}
