package dev.rollcall.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time of this JVM's threads, grouped by name without trailing numbers, and what they allocated:
 * a profiling aid.
 */
final class ThreadCpu {

    /** Keys of the bytes each live thread allocated so far, by thread id; {@link #since} adds them up. */
    private static final String ALLOCATED_BY = "\u0000allocated by ";

    private ThreadCpu() {
    }

    /**
     * Pseudo-groups, in the groups' unit (nanoseconds, shown as milliseconds): time so far in GC pauses
     * and JIT compilation, and collections so far (shown as their number).
     */
    static Map<String, Long> vm() {
        long gc = 0;
        long collections = 0;
        for (java.lang.management.GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            gc += Math.max(0, b.getCollectionTime());
            collections += Math.max(0, b.getCollectionCount());
        }
        java.lang.management.CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long compiled = jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
        return Map.of("(gc pauses)", gc * 1_000_000, "(gc count)", collections * 1_000_000, "(jit)", compiled * 1_000_000);
    }

    /** Nanoseconds of CPU per thread group, for the threads alive now, and the bytes each allocated so far. */
    static Map<String, Long> byGroup() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        com.sun.management.ThreadMXBean allocation = threads instanceof com.sun.management.ThreadMXBean t
                && t.isThreadAllocatedMemorySupported() && t.isThreadAllocatedMemoryEnabled() ? t : null;
        Map<String, Long> groups = new TreeMap<>();
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            long cpu = threads.getThreadCpuTime(info.getThreadId());
            if (cpu > 0) {
                groups.merge(info.getThreadName().replaceAll("[-#]?\\d+", "-N"), cpu, Long::sum);
            }
            long bytes = allocation == null ? -1 : allocation.getThreadAllocatedBytes(info.getThreadId());
            if (bytes > 0) {
                groups.put(ALLOCATED_BY + info.getThreadId(), bytes);
            }
        }
        groups.putAll(vm());
        return groups;
    }

    /** Milliseconds of CPU per group since {@code before} (groups that used less than 10 ms left out; the pseudo-groups kept). */
    static Map<String, Long> since(Map<String, Long> before) {
        return since(before, byGroup());
    }

    /**
     * As {@link #since(Map)}, up to {@code now} (a {@link #byGroup()} taken earlier, while a side's
     * threads were alive), with "(allocated MB)": what the threads alive at {@code now} allocated
     * since {@code before} (those that ended in between are left out, not subtracted).
     */
    static Map<String, Long> since(Map<String, Long> before, Map<String, Long> now) {
        Map<String, Long> delta = new TreeMap<>();
        long allocated = 0;
        for (Map.Entry<String, Long> e : now.entrySet()) {
            String group = e.getKey();
            long was = before.getOrDefault(group, 0L);
            if (group.startsWith(ALLOCATED_BY)) {
                allocated += e.getValue() - was;
                continue;
            }
            long ms = (e.getValue() - was) / 1_000_000;
            if (ms >= 10 || group.startsWith("(")) {
                delta.put(group, ms);
            }
        }
        delta.put("(allocated MB)", allocated / 1_000_000);
        return delta;
    }

    /**
     * One line for a short step (a churn): CPU milliseconds since {@code before} per thread group
     * that used at least 0.1 ms (threads that ended meanwhile are left out), and {@code workersNanos}
     * of the workers' JVMs (their clock ticks every 10 ms).
     */
    static String compact(Map<String, Long> before, long workersNanos) {
        return compact(before, byGroup(), workersNanos);
    }

    /** As {@link #compact(Map, long)}, up to {@code now} (a {@link #byGroup()} taken earlier). */
    static String compact(Map<String, Long> before, Map<String, Long> now, long workersNanos) {
        StringBuilder b = new StringBuilder("CPU ms {");
        for (Map.Entry<String, Long> e : now.entrySet()) {
            long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (!e.getKey().startsWith(ALLOCATED_BY) && d >= 100_000) {
                b.append(String.format(java.util.Locale.ROOT, "%s=%.1f, ", e.getKey(), d / 1e6));
            }
        }
        return b.append("workers' JVMs=").append(workersNanos / 1_000_000).append('}').toString();
    }
}
