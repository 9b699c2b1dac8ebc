package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.WorkerStatus;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The tracked workers as the last snapshot showed them, in URL order: each worker, its URL and its
 * status in three parallel arrays, and how many workers answered with each version. Lets
 * {@link SnapshotBuilder} make the next snapshot from the workers that changed (joined, left, or
 * marked themselves {@linkplain ShownState#noteChange() noted a change}) instead of reading every one: a
 * build that reads them all pays a cache miss per worker (their objects are scattered in the heap and
 * out of the caches between builds), twice in every churn, however few changed.
 *
 * <p>Confined to the resolver's serial context.
 */
final class ShownFleet {

    private static final ShownWorker[] NO_WORKERS = new ShownWorker[0];
    private static final String[] NO_URLS = new String[0];
    private static final WorkerStatus[] NO_STATUSES = new WorkerStatus[0];

    private ShownWorker[] workers = NO_WORKERS;
    private String[] urls = NO_URLS;
    private WorkerStatus[] statuses = NO_STATUSES;
    /** Workers with an answer, per version of it (never a zero): what the schema cache keeps. */
    private final Map<String, int[]> versions = new HashMap<>();

    /** Starts over from {@code all} (in URL order), each showing the status its {@link ShownState} holds. */
    void reset(List<? extends ShownWorker> all) {
        workers = all.toArray(NO_WORKERS);
        urls = new String[workers.length];
        statuses = new WorkerStatus[workers.length];
        versions.clear();
        for (int i = 0; i < workers.length; i++) {
            ShownWorker t = workers[i];
            urls[i] = t.url();
            statuses[i] = t.shownState().status;
            t.shownState().countedVersion = null;
            count(t);
        }
    }

    /**
     * Takes the workers in {@code left} out (those shown; others never were) and puts those in
     * {@code joined} in (none of them shown yet, none with the URL of one staying), keeping URL order;
     * a joined worker's status is {@code null} until {@link #show} sets it.
     */
    void apply(List<ShownWorker> joined, List<ShownWorker> left) {
        int m = workers.length;
        // Where each change goes, found by binary search: a merge that compared every URL read
        // 10,000 strings that are out of the caches between builds (milliseconds on a busy machine).
        int[] gone = new int[left.size()];
        int goneCount = 0;
        for (ShownWorker t : left) {
            int i = indexOf(t);
            if (i >= 0) {
                gone[goneCount++] = i;
            }
            uncount(t);
        }
        gone = Arrays.stream(gone, 0, goneCount).sorted().distinct().toArray();
        ShownWorker[] in = joined.toArray(NO_WORKERS);
        Arrays.sort(in, Comparator.comparing(ShownWorker::url));
        int[] at = new int[in.length]; // before which of the workers each joined one goes (m: at the end)
        for (int a = 0; a < in.length; a++) {
            int i = Arrays.binarySearch(urls, in[a].url());
            at[a] = i >= 0 ? i : -i - 1;
        }
        int n = m - gone.length + in.length;
        ShownWorker[] w = new ShownWorker[n];
        String[] u = new String[n];
        WorkerStatus[] s = new WorkerStatus[n];
        int src = 0;
        int dst = 0;
        int g = 0;
        int a = 0;
        while (src < m || a < in.length) {
            int stop = m;
            if (g < gone.length) {
                stop = Math.min(stop, gone[g]);
            }
            if (a < in.length) {
                stop = Math.min(stop, at[a]);
            }
            int run = stop - src; // the workers staying up to the next change, copied as a run
            System.arraycopy(workers, src, w, dst, run);
            System.arraycopy(urls, src, u, dst, run);
            System.arraycopy(statuses, src, s, dst, run);
            src += run;
            dst += run;
            if (a < in.length && at[a] == src) {
                w[dst] = in[a];
                u[dst++] = in[a++].url();
            } else if (g < gone.length && gone[g] == src) {
                src++;
                g++;
            }
        }
        workers = w;
        urls = u;
        statuses = s;
    }

    /** Where {@code t} is, or -1 when it is not among the workers. */
    int indexOf(ShownWorker t) {
        ShownState shown = t.shownState();
        int i = shown.at;
        if (i < workers.length && workers[i] == t) {
            return i; // where it was at the last look, no workers having joined or left before it since
        }
        i = Arrays.binarySearch(urls, t.url());
        if (i >= 0 && workers[i] == t) {
            shown.at = i;
            return i;
        }
        return -1;
    }

    /** {@code t}, at {@code i}, shows {@code status}; its answer's version is counted anew. */
    void show(int i, ShownWorker t, WorkerStatus status) {
        statuses[i] = status;
        WorkerInfo info = t.info();
        String version = info == null ? null : info.version();
        if (!Objects.equals(version, t.shownState().countedVersion)) {
            uncount(t);
            count(t);
        }
    }

    private void count(ShownWorker t) {
        WorkerInfo info = t.info();
        if (info != null) {
            t.shownState().countedVersion = info.version();
            versions.computeIfAbsent(info.version(), v -> new int[1])[0]++;
        }
    }

    private void uncount(ShownWorker t) {
        ShownState shown = t.shownState();
        if (shown.countedVersion != null) {
            int[] c = versions.get(shown.countedVersion);
            if (--c[0] == 0) {
                versions.remove(shown.countedVersion);
            }
            shown.countedVersion = null;
        }
    }

    /** The statuses, in URL order (a view: valid until the next change). */
    List<WorkerStatus> statuses() {
        return Collections.unmodifiableList(Arrays.asList(statuses));
    }

    /** The versions the workers answered with (a view). */
    Set<String> versions() {
        return Collections.unmodifiableSet(versions.keySet());
    }

    /** The workers, in URL order (a view). */
    List<ShownWorker> workers() {
        return Collections.unmodifiableList(Arrays.asList(workers));
    }
}
