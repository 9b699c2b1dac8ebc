package dev.rollcall.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One convergence of scenario 2 (Rollcall's, the baseline's or the floor's), and the
 * {@value Plan#CHURNS} churns after it when there were spares: each churn's time, and the probes
 * each sent; with the statistics over the reps of one side that the report uses. {@code kernel} is {@link KernelCounters#since}'s;
 * {@code probeNanos} the convergence's probe latencies added up, which divided by its time is
 * how many probes were in flight on average (Little's law).
 */
record ConvergenceRun(long nanos, long p50, long p99, long probes, long[] churns, long[] churnProbes, long cpuNanos,
                      Map<String, Long> threadCpu, long snapshots, long serverCpuNanos, long[] kernel, long probeNanos) {

    /** One line for the log: where the CPU went (this JVM's threads, the workers' JVMs). */
    String detail(String who) {
        return String.format(Locale.ROOT, "    %s: %.1f ms, probe p50 / p99 %.1f / %.1f ms, churns %s ms, %d snapshots,"
                        + " %.1f probes in flight on average, CPU %.0f ms here + %.0f ms"
                        + " in the workers' JVMs; of it in the kernel %d + %d ms; context switches %d + %d;"
                        + " threads (ms) %s", who, nanos / 1e6, p50 / 1e6, p99 / 1e6, millis(churns), snapshots,
                probeNanos / (double) nanos,
                cpuNanos / 1e6,
                serverCpuNanos / 1e6, kernel[KernelCounters.KERNEL_MS_HERE], kernel[KernelCounters.KERNEL_MS_THERE],
                kernel[KernelCounters.SWITCHES_HERE], kernel[KernelCounters.SWITCHES_THERE], threadCpu);
    }

    /** Durations in milliseconds, one decimal, for the log. */
    static String millis(long[] nanos) {
        return java.util.Arrays.stream(nanos).mapToObj(n -> String.format(Locale.ROOT, "%.1f", n / 1e6)).toList().toString();
    }

    /** The median over {@code runs} of a pseudo-group of their {@link ThreadCpu} maps (0 when absent). */
    static long medianOf(List<ConvergenceRun> runs, String key) {
        if (runs.isEmpty()) {
            return 0;
        }
        return Latencies.median(runs.stream().mapToLong(r -> r.threadCpu().getOrDefault(key, 0L)).toArray());
    }

    /** The most probes any churn of {@code runs} sent. */
    static long mostChurnProbes(List<ConvergenceRun> runs) {
        return runs.stream().flatMapToLong(r -> java.util.Arrays.stream(r.churnProbes())).max().orElse(0);
    }

    /** The median of all the churns of all {@code runs}. */
    static long medianChurn(List<ConvergenceRun> runs) {
        return Latencies.median(runs.stream().flatMapToLong(r -> java.util.Arrays.stream(r.churns())).toArray());
    }

    /** The run of median time (the lower middle one of an even number). */
    static ConvergenceRun median(List<ConvergenceRun> runs) {
        List<ConvergenceRun> sorted = new ArrayList<>(runs);
        sorted.sort((a, b) -> Long.compare(a.nanos(), b.nanos()));
        return sorted.get((sorted.size() - 1) / 2);
    }

    /**
     * The run of median time, with the probe p50 and p99 the medians over all {@code runs}: the
     * floor's latencies are reported that way ({@code Convergence.floorP99}), and at 10,000 a run's p99 is made
     * of the GC pauses that run had, which the run of median time need not have in the median.
     */
    static ConvergenceRun typical(List<ConvergenceRun> runs) {
        ConvergenceRun m = median(runs);
        long p50 = Latencies.median(runs.stream().mapToLong(ConvergenceRun::p50).toArray());
        long p99 = Latencies.median(runs.stream().mapToLong(ConvergenceRun::p99).toArray());
        return new ConvergenceRun(m.nanos(), p50, p99, m.probes(), m.churns(), m.churnProbes(), m.cpuNanos(), m.threadCpu(),
                m.snapshots(), m.serverCpuNanos(), m.kernel(), m.probeNanos());
    }
}
