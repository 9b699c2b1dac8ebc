package dev.rollcall.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What Linux counts for this JVM and its child processes (the workers' JVMs): context switches of
 * all their threads ({@code /proc/PID/task/TID/status}) and CPU time spent in the kernel
 * ({@code /proc/PID/stat}). A profiling aid for the convergence log: a hand-off between threads that
 * finds the other one parked costs a switch and a system call or two, CPU that no Java frame shows.
 * Zeros where there is no {@code /proc}.
 */
final class KernelCounters {

    /** Indexes into {@link #since}'s array. */
    static final int SWITCHES_HERE = 0, SWITCHES_THERE = 1, KERNEL_MS_HERE = 2, KERNEL_MS_THERE = 3;

    private static final long TICK_MS = 10; // USER_HZ is 100 on every Linux this runs on

    /**
     * The counters at one moment: this JVM's switches per thread id (a thread that ends takes its
     * count with it, so a sum over threads would go down), the rest as sums.
     */
    record Snapshot(Map<Long, Long> switchesByThread, long switchesThere, long kernelMsHere, long kernelMsThere) {
    }

    private KernelCounters() {
    }

    /** The counters now. */
    static Snapshot now() {
        long self = ProcessHandle.current().pid();
        long[] there = new long[2];
        ProcessHandle.current().children().forEach(p -> {
            there[0] += switches(p.pid()).values().stream().mapToLong(Long::longValue).sum();
            there[1] += kernelMillis(p.pid());
        });
        return new Snapshot(switches(self), there[0], kernelMillis(self), there[1]);
    }

    /**
     * The counters since {@code before}, indexed by the constants above: this JVM's switches are
     * those of the threads alive now (from zero for a thread started since), so the switches of a
     * thread that ended meanwhile are missing, never subtracted.
     */
    static long[] since(Snapshot before) {
        Snapshot now = now();
        long here = 0;
        for (Map.Entry<Long, Long> t : now.switchesByThread().entrySet()) {
            long delta = t.getValue() - before.switchesByThread().getOrDefault(t.getKey(), 0L);
            here += delta >= 0 ? delta : t.getValue(); // fewer than before: a new thread reusing an ended one's id
        }
        return new long[] {here, now.switchesThere() - before.switchesThere(),
                now.kernelMsHere() - before.kernelMsHere(), now.kernelMsThere() - before.kernelMsThere()};
    }

    /** Switches per thread id of process {@code pid}. */
    private static Map<Long, Long> switches(long pid) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        Map<Long, Long> byThread = new HashMap<>();
        if (!Files.isDirectory(tasks)) {
            return byThread;
        }
        try (Stream<Path> threads = Files.list(tasks)) {
            for (Path t : (Iterable<Path>) threads::iterator) {
                long sum = 0;
                for (String line : lines(t.resolve("status"))) {
                    if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                        sum += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                    }
                }
                byThread.put(Long.parseLong(t.getFileName().toString()), sum);
            }
        } catch (IOException | java.io.UncheckedIOException | NumberFormatException gone) {
            // the process or a thread ended while we read: count what we read
        }
        return byThread;
    }

    /** The process's system time ({@code stime}, field 15 of {@code /proc/PID/stat}), in milliseconds. */
    private static long kernelMillis(long pid) {
        List<String> stat = lines(Path.of("/proc", Long.toString(pid), "stat"));
        if (stat.isEmpty()) {
            return 0;
        }
        String line = stat.get(0);
        String[] fields = line.substring(line.lastIndexOf(')') + 2).split(" "); // fields from 3 on
        try {
            return Long.parseLong(fields[15 - 3]) * TICK_MS;
        } catch (RuntimeException unexpected) {
            return 0;
        }
    }

    private static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException gone) {
            return List.of(); // the thread or process ended while we read
        }
    }
}
