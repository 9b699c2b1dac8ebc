package dev.rollcall.benchmarks;

import java.util.Arrays;

/** Durations in nanoseconds, recorded from any thread; percentiles by nearest rank. */
final class Latencies {

    private long[] values = new long[1024];
    private int size;

    synchronized void add(long nanos) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = nanos;
    }

    synchronized void clear() {
        size = 0;
    }

    synchronized int count() {
        return size;
    }

    /** A copy of the durations, in the order added. */
    synchronized long[] values() {
        return Arrays.copyOf(values, size);
    }

    /** All durations added up. */
    synchronized long sum() {
        long sum = 0;
        for (int i = 0; i < size; i++) {
            sum += values[i];
        }
        return sum;
    }

    /** The {@code p}-th percentile (0 < p ≤ 100), nearest rank; 0 when empty. */
    synchronized long percentile(double p) {
        return percentile(Arrays.copyOf(values, size), p);
    }

    /** Nearest-rank percentile of {@code values} (sorted here). */
    static long percentile(long[] values, double p) {
        if (values.length == 0) {
            return 0;
        }
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    static long median(long[] values) {
        return percentile(values, 50);
    }
}
