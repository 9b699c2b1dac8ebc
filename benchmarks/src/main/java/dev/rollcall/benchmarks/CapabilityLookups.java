package dev.rollcall.benchmarks;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.InternalSnapshots;
import dev.rollcall.api.registry.WorkerStatus;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntUnaryOperator;

/**
 * Scenario 16, capability lookups: what a query pays to take only the workers that have what it
 * needs, on a snapshot of {@value #FLEET} compatible workers of which {@value #MEETING} meet the
 * requirements ({@code udf:geo_distance, plan-protocol>=3}; every worker has a {@code datafusion}
 * and a {@code plan-protocol} version). Pure computation in this JVM, one thread: each row is that
 * thread's CPU time and the bytes it allocated per operation (robust on a shared machine, unlike
 * wall time), the median of {@value #BATCHES} batches after a warm-up. The baseline is what a user
 * writes without the index: a filter over {@code workers()} with {@code Requirements.isMetBy}.
 */
final class CapabilityLookups {

    static final int FLEET = 10_000;
    static final int MEETING = 100;
    private static final int BATCHES = 5;
    private static final Requirements REQUIRED = Requirements.of("udf:geo_distance", "plan-protocol>=3");
    /** Builds a snapshot's capability index without asking for {@link #REQUIRED}. */
    private static final Requirements OTHER = Requirements.of("datafusion^56");

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** CPU nanoseconds and bytes allocated per operation. */
    record Cost(double cpuNanos, double bytes) {
    }

    private static volatile long sink; // keeps the results alive, so the JIT cannot drop the work

    private CapabilityLookups() {
    }

    static void run(Plan plan, Report report) {
        boolean quick = plan.name().equals("quick");
        int lookups = quick ? 20_000 : 100_000;
        int snapshots = quick ? 40 : 200;
        long warmUpNanos = (quick ? 1 : 4) * 1_000_000_000L;

        List<WorkerStatus> fleet = fleet(true);
        FleetSnapshot snapshot = FleetSnapshot.builder(1).statuses(fleet).build();
        int met = snapshot.workersWith(REQUIRED).size();
        int filtered = snapshot.workers().stream().filter(REQUIRED::isMetBy).toList().size();
        if (met != MEETING || filtered != MEETING) {
            throw new IllegalStateException("the requirements select " + met + " (filter: " + filtered + "), not " + MEETING);
        }

        Cost indexed = measure(lookups, warmUpNanos, i -> snapshot.workersWith(REQUIRED).size());
        Cost filter = measure(Math.max(50, lookups / 100), warmUpNanos,
                i -> snapshot.workers().stream().filter(REQUIRED::isMetBy).toList().size());
        report.add(new Report.Row("16. `workersWith(r)`, " + MEETING + " of " + Report.count(FLEET)
                + " meeting r, CPU / allocated (baseline: filtering workers())", perOp(indexed), perOp(filter), Report.lessIsBetter(indexed.cpuNanos(),
                filter.cpuNanos()), "≤ 10 µs", Report.met(indexed.cpuNanos() <= 10_000)));

        // A lease with requirements narrows the snapshot: the first on a new snapshot finds its workers
        // (the index already built by another query); later ones with the same requirements reuse the view.
        Cost firstLease = perSnapshot(fleet, snapshots, warmUpNanos, s -> {
            s.workersWith(OTHER);
            return null;
        }, s -> s.requiring(REQUIRED).workers().size());
        Cost repeatLease = measure(lookups, warmUpNanos, i -> snapshot.requiring(REQUIRED).workers().size());
        report.add(new Report.Row("16. `lease(r)`'s narrowing, first on a new snapshot / again, CPU / allocated"
                + " (baseline: the filter)", perOp(firstLease) + " / " + perOp(repeatLease), perOp(filter),
                Report.lessIsBetter(firstLease.cpuNanos(), filter.cpuNanos()), "measured", "—"));

        Cost indexBuild = perSnapshot(fleet, snapshots, warmUpNanos, s -> null, s -> s.workersWith(REQUIRED).size());
        report.add(new Report.Row("16. … the capability index, built by a snapshot's first lookup, CPU / allocated",
                perOp(indexBuild), "—", "—", "once per snapshot asked", "—"));

        List<WorkerStatus> plain = fleet(false);
        Cost scratch = measure(Math.max(20, snapshots / 2), warmUpNanos,
                i -> FleetSnapshot.builder(i).statuses(plain).build().counts().compatible());
        WorkerStatus[][] steps = churnSteps(plain, quick ? 50 : 200);
        FleetSnapshot[] previous = {FleetSnapshot.builder(0).statuses(plain).build()};
        Cost after = measure(steps.length, warmUpNanos, i -> {
            FleetSnapshot next = InternalSnapshots.buildAfter(FleetSnapshot.builder(i + 1),
                    steps[i % steps.length], previous[0]); // never written: snapshots may share it
            previous[0] = next;
            return next.counts().compatible();
        });
        report.add(new Report.Row("16. a " + Report.count(FLEET) + "-worker snapshot without capabilities, from scratch / after 1 %"
                + " changed, CPU / allocated",
                perOp(scratch) + " / " + perOp(after), "—", "—", "as before capabilities", "—"));
        report.note(String.format(Locale.ROOT, "Capability lookups (16): %,d compatible workers in one snapshot,"
                + " each with datafusion=55.0.1 or 56.0.0 and plan-protocol=2 or 3, every %d-th with udf:geo_distance"
                + " and plan-protocol=3; requirements %s (met by %d). One thread's CPU time and allocated bytes per"
                + " operation (ThreadMXBean), median of %d batches after %d s of warm-up: %,d lookups a batch"
                + " (the filter: %,d); %d new snapshots a batch for the first lease and the index build, each call timed alone"
                + " right after the snapshot was built (less an empty reading of the clock).",
                FLEET, FLEET / MEETING, REQUIRED, MEETING, BATCHES, warmUpNanos / 1_000_000_000L, lookups,
                Math.max(50, lookups / 100), snapshots));
    }

    /** The fleet, in URL order; with capabilities or without. */
    private static List<WorkerStatus> fleet(boolean capabilities) {
        List<WorkerStatus> all = new ArrayList<>(FLEET);
        for (int i = 0; i < FLEET; i++) {
            all.add(status(i, capabilities, "i" + i));
        }
        all.sort(java.util.Comparator.comparing(s -> s.endpoint().url()));
        return all;
    }

    private static WorkerStatus status(int i, boolean capabilities, String instance) {
        WorkerEndpoint e = WorkerEndpoint.of(AddressFleetMain.address(i), 7000);
        Capabilities c = !capabilities ? Capabilities.none()
                : i % (FLEET / MEETING) == 0
                ? Capabilities.of("udf:geo_distance", "plan-protocol=3", "datafusion=56.0.0")
                : Capabilities.of("plan-protocol=" + (2 + i % 2), "datafusion=" + (i % 3 == 0 ? "56.0.0" : "55.0.1"));
        WorkerInfo info = new WorkerInfo(e, "1.0.0", instance, Map.of(), List.of(), c);
        return new WorkerStatus(e, WorkerStatus.State.COMPATIBLE, "", Optional.of(info));
    }

    /**
     * Statuses in which 1 % of the workers changed from the step before (a block of them restarted: a
     * new instance, or back to the first), in a cycle: the last step is one block from the first.
     */
    private static WorkerStatus[][] churnSteps(List<WorkerStatus> fleet, int steps) {
        WorkerStatus[] first = fleet.toArray(new WorkerStatus[0]);
        WorkerStatus[] restarted = first.clone();
        for (int i = 0; i < restarted.length; i++) {
            WorkerStatus was = restarted[i];
            WorkerInfo info = was.info().orElseThrow();
            restarted[i] = new WorkerStatus(was.endpoint(), WorkerStatus.State.COMPATIBLE, "", Optional.of(new WorkerInfo(
                    info.endpoint(), info.version(), "restarted", Map.of(), List.of(), Capabilities.none())));
        }
        int block = FLEET / 100;
        int blocks = Math.min(steps / 2, 100);
        WorkerStatus[][] out = new WorkerStatus[2 * blocks][];
        WorkerStatus[] current = first;
        for (int s = 0; s < out.length; s++) {
            WorkerStatus[] next = current.clone();
            int from = (s % blocks) * block;
            for (int i = from; i < from + block; i++) {
                next[i] = next[i] == first[i] ? restarted[i] : first[i];
            }
            out[s] = next;
            current = next;
        }
        return out;
    }

    /**
     * The cost of {@code measured} on a new snapshot of {@code fleet} each time, right after
     * {@code prepare} ran on it (neither the build nor {@code prepare} measured: each call is
     * bracketed alone, less what an empty bracket costs).
     */
    private static Cost perSnapshot(List<WorkerStatus> fleet, int count, long warmUpNanos,
                                    java.util.function.Function<FleetSnapshot, Object> prepare,
                                    java.util.function.ToIntFunction<FleetSnapshot> measured) {
        long until = System.nanoTime() + warmUpNanos;
        while (System.nanoTime() < until) {
            FleetSnapshot s = FleetSnapshot.builder(1).statuses(fleet).build();
            prepare.apply(s);
            sink += measured.applyAsInt(s);
        }
        double[] bracket = new double[BATCHES];
        double[] cpu = new double[BATCHES];
        double[] bytes = new double[BATCHES];
        for (int b = 0; b < BATCHES; b++) {
            long emptyCpu = 0;
            long cpuSum = 0;
            long bytesSum = 0;
            for (int i = 0; i < count; i++) {
                FleetSnapshot s = FleetSnapshot.builder(i).statuses(fleet).build();
                prepare.apply(s);
                long e0 = THREADS.getCurrentThreadCpuTime();
                long e1 = THREADS.getCurrentThreadCpuTime();
                long a0 = THREADS.getCurrentThreadAllocatedBytes();
                long c0 = THREADS.getCurrentThreadCpuTime();
                sink += measured.applyAsInt(s);
                long c1 = THREADS.getCurrentThreadCpuTime();
                long a1 = THREADS.getCurrentThreadAllocatedBytes();
                emptyCpu += e1 - e0;
                cpuSum += c1 - c0;
                bytesSum += a1 - a0;
            }
            bracket[b] = emptyCpu / (double) count;
            cpu[b] = Math.max(0, cpuSum - emptyCpu) / (double) count;
            bytes[b] = bytesSum / (double) count;
        }
        return new Cost(median(cpu), median(bytes));
    }

    /** The cost of {@code op} (given the operation's number), warmed up first. */
    private static Cost measure(int ops, long warmUpNanos, IntUnaryOperator op) {
        long until = System.nanoTime() + warmUpNanos;
        for (int i = 0; System.nanoTime() < until; i++) {
            sink += op.applyAsInt(i % ops);
        }
        double[] cpu = new double[BATCHES];
        double[] bytes = new double[BATCHES];
        for (int b = 0; b < BATCHES; b++) {
            long c0 = THREADS.getCurrentThreadCpuTime();
            long a0 = THREADS.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < ops; i++) {
                sink += op.applyAsInt(i);
            }
            bytes[b] = (THREADS.getCurrentThreadAllocatedBytes() - a0) / (double) ops;
            cpu[b] = (THREADS.getCurrentThreadCpuTime() - c0) / (double) ops;
        }
        return new Cost(median(cpu), median(bytes));
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static String perOp(Cost c) {
        return Report.duration(c.cpuNanos()) + ", " + Report.bytes(c.bytes());
    }
}
