package dev.rollcall.core.internal.snapshot;

import dev.rollcall.core.internal.serial.SerialContext;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * When a snapshot is built. Each change marks the state dirty and asks for a build; the build runs
 * in a task of its own, queued behind the work already waiting on the serial context, so that a
 * burst of probe answers makes one snapshot rather than one each: a build costs time in proportion
 * to the fleet, and one per answer made converging on 10,000 workers quadratic (minutes instead of
 * seconds). While answers keep coming, builds are also spaced out to about a ninth of the context's
 * time: no sooner than {@value #BUILD_SPACING} times the typical CPU time of a build (smoothed over
 * the last few) after the last one, and never more than 40 ms later (a build's cost grows with the fleet). Once nothing is in flight or queued,
 * and whenever a worker readers may be using is going or changed (urgent news), the change is built
 * at once; a build already spaced out is brought forward.
 *
 * <p>Whatever the news, two builds start at least the pacing interval apart
 * ({@code rollcall.publish.max-rate}: 1 / max-rate, 50 ms by default): a worker that pushes a new
 * answer every millisecond, or a fleet in churn, cannot hand every listener a snapshot per answer.
 * Changes within the interval coalesce into the build at its end (latest wins), so urgent news
 * waits at most one interval, and news after a quiet interval is built at once.
 *
 * <p>Confined to the resolver's serial context. Time comes from the context's ticker; a build's
 * cost from {@code cpuNanos} (the thread's CPU time: a GC pause or a busy machine must not space
 * builds out further), both injectable for tests.
 */
public final class PublishPacer {

    private static final int BUILD_SPACING = 8;
    /** No change waits longer than this for the spacing, however slow the last build was. */
    private static final long MAX_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(40);

    private final SerialContext context;
    private final LongSupplier cpuNanos;
    private final Runnable build;
    /** The least time between the starts of two builds (0: none): the ceiling on snapshots per second. */
    private final long intervalNanos;
    private boolean dirty;
    /**
     * A worker readers may be using is going or changed (its connection dropped, it left discovery,
     * a probe of it failed, it restarted in place): such news is published at once, never spaced
     * out, so that no reader keeps sending work to it for longer than a snapshot build.
     */
    private boolean urgent;
    private boolean queued;
    private SerialContext.Timer spaced;     // a queued build waiting for its spacing, if any
    private long spacedAt;                  // ticker reading the spaced build is due at
    private boolean builtOnce;
    private long lastBuildNanos;            // ticker reading at the start of the last build
    private long nextBuildNanos;            // ticker reading before which no spaced build runs
    private boolean spacingKnown;
    /** A smoothed build cost: one slow build (a cold JIT, a page fault storm) must not hold changes back. */
    private long typicalBuildCpuNanos;
    private boolean closed;

    /**
     * {@code build} builds and publishes a snapshot of the current state (if it changed); two builds
     * start at least {@code intervalNanos} apart (0: no ceiling).
     */
    public PublishPacer(SerialContext context, LongSupplier cpuNanos, long intervalNanos, Runnable build) {
        if (intervalNanos < 0) {
            throw new IllegalArgumentException("pacing interval " + intervalNanos + " ns is negative");
        }
        this.context = context;
        this.cpuNanos = cpuNanos;
        this.intervalNanos = intervalNanos;
        this.build = build;
    }

    /** Something a reader may see changed. */
    public void changed() {
        dirty = true;
    }

    /** Something a reader may be using is going or changed: build at once. */
    public void changedUrgently() {
        dirty = true;
        urgent = true;
    }

    /**
     * Asks for a build of what changed; {@code busy} says that answers keep coming (probes in flight
     * or queued), so that the build may be spaced out unless the news is urgent.
     */
    public void requestBuild(boolean busy) {
        if (!dirty || closed) {
            return;
        }
        boolean now = urgent || !busy;
        long nanos = context.nanoTime();
        long at = now || !spacingKnown ? nanos : nextBuildNanos;
        if (builtOnce && at - (lastBuildNanos + intervalNanos) < 0) {
            at = lastBuildNanos + intervalNanos; // the ceiling: news within the interval joins the build at its end
        }
        if (queued && (spaced == null || at - spacedAt >= 0)) {
            return; // a build already comes as soon or sooner
        }
        if (spaced != null) {
            spaced.cancel();
            spaced = null;
        }
        queued = true;
        long wait = at - nanos;
        if (wait > 0) {
            spaced = context.schedule(this::buildNow, wait);
            spacedAt = at;
        } else {
            context.execute(this::buildNow);
        }
    }

    private void buildNow() {
        queued = false;
        spaced = null;
        if (!dirty || closed) {
            return;
        }
        dirty = false;
        urgent = false;
        builtOnce = true;
        lastBuildNanos = context.nanoTime();
        long started = cpuNanos.getAsLong();
        try {
            build.run();
        } finally {
            long cpu = cpuNanos.getAsLong() - started;
            typicalBuildCpuNanos = typicalBuildCpuNanos == 0 ? cpu : (3 * typicalBuildCpuNanos + cpu) / 4;
            nextBuildNanos = context.nanoTime() + Math.min(MAX_SPACING_NANOS, typicalBuildCpuNanos * BUILD_SPACING);
            spacingKnown = true;
        }
    }

    /** No build after this. */
    public void close() {
        closed = true;
        if (spaced != null) {
            spaced.cancel();
            spaced = null;
        }
    }
}
