package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.registry.KeyRouting;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.settings.SubsetSettings;
import java.util.HashSet;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Which workers this coordinator uses ({@code rollcall.subset.size} = K) and which hold a kept
 * channel, by rendezvous weight on the coordinator id: {@link KeyRouting#weight(String, String)},
 * with the id as the key, so the weight is the documented, fixed one (every coordinator computes
 * every other's subset alike). Each worker's weight is computed once and kept on it.
 *
 * <ul>
 *   <li>the <b>subset</b>: of the workers the policy (and label preference) accepted over the whole
 *       fleet, the K of highest weight ({@link #members}); the policy never sees a subset, so every
 *       coordinator chooses the same cohort;
 *   <li><b>kept-eligible</b> ({@link #rank}): the K of highest weight among the workers that could be
 *       in the subset (pending, accepted); at start, before any answer, the top K of all. A worker
 *       that is rejected or fails drops out and the next in rank enters. Once nothing is pending
 *       above them, these are the subset's members. While workers of higher rank are still pending
 *       (converging), a member of lower rank is used without a kept channel, probed over a
 *       connection of its own each time: giving it one would open and close a stream for every
 *       member that a pending worker of higher rank displaces on answering (several probes per
 *       worker while converging, where one suffices).
 * </ul>
 *
 * <p>Ties of weight (practically never) go to the lower URL, as key routing's do. Confined to the
 * resolver's serial context.
 */
public final class Subset {

    private final int size;
    private final String coordinatorId;
    private final String reason;

    public Subset(SubsetSettings settings) {
        this.size = settings.size();
        this.coordinatorId = settings.coordinatorId();
        this.reason = "accepted by the policy, outside this coordinator's subset of " + size
                + " (rollcall.subset.size, coordinator id '" + coordinatorId + "'): other coordinators use it";
    }

    public int size() {
        return size;
    }

    public String coordinatorId() {
        return coordinatorId;
    }

    /** What an {@link State#OUTSIDE_SUBSET} status says. */
    String reason() {
        return reason;
    }

    /** {@code w}'s rendezvous weight on this coordinator's id, computed once per worker. */
    long weight(ShownWorker w) {
        ShownState s = w.shownState();
        if (s.weighedBy != this) {
            s.subsetWeight = KeyRouting.weight(coordinatorId, w.url());
            s.weighedBy = this;
        }
        return s.subsetWeight;
    }

    /** Whether {@code a} ranks above {@code b}: a higher weight (unsigned), on a tie the lower URL. */
    private boolean above(ShownWorker a, ShownWorker b) {
        int c = Long.compareUnsigned(weight(a), weight(b));
        return c != 0 ? c > 0 : a.url().compareTo(b.url()) < 0;
    }

    /**
     * The URLs of the K workers of highest weight among {@code workers} that {@code accepted} says
     * the policy accepted: O(M log K).
     */
    Set<String> members(Iterable<? extends ShownWorker> workers, Predicate<ShownWorker> accepted) {
        PriorityQueue<ShownWorker> top = top(workers, accepted);
        Set<String> urls = new HashSet<>(top.size() * 2);
        top.forEach(w -> urls.add(w.url()));
        return urls;
    }

    /** The K of highest weight among those of {@code workers} that {@code in} admits; its head is the lowest. */
    private PriorityQueue<ShownWorker> top(Iterable<? extends ShownWorker> workers, Predicate<ShownWorker> in) {
        PriorityQueue<ShownWorker> top = new PriorityQueue<>(size + 1, (x, y) -> x == y ? 0 : above(x, y) ? 1 : -1);
        for (ShownWorker w : workers) {
            if (!in.test(w)) {
                continue;
            }
            if (top.size() < size) {
                top.add(w);
            } else if (above(w, top.peek())) {
                top.poll();
                top.add(w);
            }
        }
        return top;
    }

    /**
     * Marks which of {@code workers} may hold a kept channel ({@link #keptEligible}): the K of highest
     * weight among those not known to be unusable, by the status each was last shown with (none yet:
     * it counts as pending). Called after each build and when workers join, before they are probed.
     * O(M log K).
     */
    public void rank(Iterable<? extends ShownWorker> workers) {
        for (ShownWorker w : workers) {
            w.shownState().keptEligible = false;
        }
        for (ShownWorker w : top(workers, Subset::couldBeMember)) {
            w.shownState().keptEligible = true;
        }
    }

    /** Whether {@code w} may hold a kept channel, as the last {@link #rank} found. */
    public boolean keptEligible(ShownWorker w) {
        return w.shownState().keptEligible;
    }

    /** Not known to be unusable: not shown yet, pending, or accepted. */
    private static boolean couldBeMember(ShownWorker w) {
        WorkerStatus s = w.shownState().status;
        if (s == null) {
            return true;
        }
        State state = s.state();
        return state == State.PENDING || state == State.COMPATIBLE || state == State.OUTSIDE_SUBSET;
    }
}
