package dev.rollcall.benchmarks;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Locale;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

/**
 * A profiling aid: timed steps (a churn, a convergence) and this JVM's GC pauses on the wall clock,
 * one tab-separated line each in {@code <logs>/timeline.tsv}, to lay beside the workers' GC logs
 * ({@code servers-<i>-gc.log}, whose lines carry the same clock). A slow churn that overlaps a pause
 * of some JVM is told apart from one that does not. Lines are appended as they come, from any thread.
 */
final class Timeline {

    private static volatile Path file;

    private Timeline() {
    }

    /**
     * Starts writing to {@code <logs>/timeline.tsv} (emptied first: the default logs directory is
     * reused run after run) and listening to this JVM's collections.
     */
    static void start(Path logs) {
        Path f = logs.resolve("timeline.tsv");
        try {
            Files.writeString(f, "", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + f, e);
        }
        file = f;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter emitter) {
                emitter.addNotificationListener((n, handback) -> {
                    if (!n.getType().equals(GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION)) {
                        return;
                    }
                    var info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
                    // Told right after the pause: it ended now. GcInfo's own start time counts from
                    // another origin than the runtime's uptime; laid on the wall clock through the
                    // uptime, pauses came out 96 ms early against -Xlog:gc's clock (2026-12-06), and
                    // settle()'s full collection after a convergence fell inside it. Now they come
                    // out 3 ms late at the median, 10 ms at the 90th percentile, never early.
                    long startWall = System.currentTimeMillis() - info.getGcInfo().getDuration();
                    line(Instant.ofEpochMilli(startWall), "harness gc " + info.getGcName() + " (" + info.getGcCause() + ")",
                            info.getGcInfo().getDuration());
                }, null, null);
            }
        }
    }

    /** A step named {@code what} that started at {@code start} (wall clock) and took {@code nanos}. */
    static void mark(Instant start, String what, long nanos) {
        line(start, what, nanos / 1e6);
    }

    private static synchronized void line(Instant start, String what, double millis) {
        Path f = file;
        if (f == null) {
            return;
        }
        try {
            Files.writeString(f, String.format(Locale.ROOT, "%s\t%.3f\t%s%n", start, millis, what),
                    StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + f, e);
        }
    }
}
