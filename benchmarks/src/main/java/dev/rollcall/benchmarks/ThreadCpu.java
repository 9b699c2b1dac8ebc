package dev.rollcall.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Map;
import java.util.TreeMap;

/** CPU time of this JVM's threads, grouped by name without trailing numbers: a profiling aid. */
final class ThreadCpu {

    private ThreadCpu() {
    }

    /** Milliseconds spent so far in GC pauses ("gc") and JIT compilation ("jit"), as pseudo-groups. */
    static Map<String, Long> vm() {
        long gc = 0;
        for (java.lang.management.GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            gc += Math.max(0, b.getCollectionTime());
        }
        java.lang.management.CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long compiled = jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
        return Map.of("(gc pauses)", gc * 1_000_000, "(jit)", compiled * 1_000_000);
    }

    /** Nanoseconds of CPU per thread group, for the threads alive now. */
    static Map<String, Long> byGroup() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<String, Long> groups = new TreeMap<>();
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            long cpu = threads.getThreadCpuTime(info.getThreadId());
            if (cpu > 0) {
                groups.merge(info.getThreadName().replaceAll("[-#]?\\d+", "-N"), cpu, Long::sum);
            }
        }
        groups.putAll(vm());
        return groups;
    }

    /** Milliseconds of CPU per group since {@code before} (groups that used less than 10 ms left out). */
    static Map<String, Long> since(Map<String, Long> before) {
        Map<String, Long> now = byGroup();
        Map<String, Long> delta = new TreeMap<>();
        now.forEach((group, cpu) -> {
            long ms = (cpu - before.getOrDefault(group, 0L)) / 1_000_000;
            if (ms >= 10) {
                delta.put(group, ms);
            }
        });
        return delta;
    }
}
