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
 * <p>Not thread-safe: {@link WorkerInfoService} owns it and calls it under its own lock.
 */
final class Holders {

    /** The longest holder id, in characters. */
    static final int MAX_ID_CHARS = 64;
    /** How many ends of holds the close's log line lists; the rest are counted. */
    private static final int MAX_LOGGED = 16;

    private record Holder(String id, String peer, long openedNanos) {
        String describe() {
            return "'" + PeerText.escape(id, MAX_ID_CHARS) + "' from " + PeerText.escape(peer);
        }
    }

    private final Map<WatchStream, Holder> open = new HashMap<>();
    private final Set<String> released = new HashSet<>();
    private final List<String> ends = new ArrayList<>();
    private final int maxReleased;
    private int endsNotLogged;
    private boolean draining;
    private long drainNanos;

    /** {@code maxReleased}: the most holder ids one drain keeps as released (the watch limit). */
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
    enum Release { CHANGED, UNCHANGED, FULL }

    /**
     * {@code id} released the worker. Outside a drain this changes nothing (a serving worker is held
     * again by every coordinator that publishes it). {@link Release#FULL}: this drain already keeps
     * {@code maxReleased} ids, and {@code id} is not one of them.
     */
    Release release(String id, long now) {
        if (!draining || released.contains(id)) {
            return Release.UNCHANGED;
        }
        if (released.size() >= maxReleased) {
            return Release.FULL;
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

    /** Who still holds the worker, each {@code 'id' from peer}. */
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
