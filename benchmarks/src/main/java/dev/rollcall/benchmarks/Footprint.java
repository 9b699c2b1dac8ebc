package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Scenario 5, memory and threads, in a JVM of its own so that nothing else lives on its heap: Rollcall
 * with channels kept, with channels closed, then the baseline, one after the other. For each:
 * converge on 100 workers and count live threads; close that, run
 * {@code System.gc()} until the used heap stops falling, read it; converge on 10,000 workers,
 * count live threads (and the peak while converging), {@code System.gc()} again, read the used heap;
 * retained heap per worker = the difference ÷ 10,000. It counts Java heap only: Netty's direct
 * buffers and the kernel's socket buffers are not in it.
 */
final class Footprint {

    private static final int FEW = 100;

    private Footprint() {
    }

    static void run(List<WorkerEndpoint> all, Report report, Path logs) throws Exception {
        Path urls = Files.createTempFile(logs, "fleet-", ".txt");
        Files.write(urls, all.subList(0, Plan.LARGE).stream().map(WorkerEndpoint::url).toList());
        try (ChildJvm jvm = ChildJvm.start("footprint", List.of("-Xmx2g", "-XX:+UseG1GC"), Bench.class,
                List.of("--child", "footprint", urls.toString()), logs.resolve("footprint.log"))) {
            Map<String, Long> kept = values(jvm.awaitLine("RESULT kept "));
            Map<String, Long> closed = values(jvm.awaitLine("RESULT closed "));
            Map<String, Long> bare = values(jvm.awaitLine("RESULT bare "));
            Map<String, Long> base = values(jvm.awaitLine("RESULT baseline "));
            report(kept, closed, base, report);
            bareChannel(kept, bare, report);
        }
    }

    /** {@code a=1 b=2} as a map. */
    static Map<String, Long> values(String line) {
        Map<String, Long> values = new HashMap<>();
        Arrays.stream(line.split(" ")).map(kv -> kv.split("=")).forEach(kv -> values.put(kv[0], Long.parseLong(kv[1])));
        return values;
    }

    private static void report(Map<String, Long> kept, Map<String, Long> closed, Map<String, Long> base,
                               Report report) {

        double keptPer = kept.get("heap") / (double) Plan.LARGE;
        double closedPer = closed.get("heap") / (double) Plan.LARGE;
        double basePer = base.get("heap") / (double) Plan.LARGE;
        report.add(new Report.Row("5. retained heap per worker at 10,000, probe channels kept (default)",
                Report.bytes(keptPer), Report.bytes(basePer) + " (no channels kept)", Report.lessIsBetter(keptPer, basePer),
                "≤ 2 KiB + a bare channel and stream (row below)", "see below"));
        report.add(new Report.Row("5. retained heap per worker at 10,000, `keepProbeChannels(false)`",
                Report.bytes(closedPer), Report.bytes(basePer), Report.lessIsBetter(closedPer, basePer),
                "≤ 2 KiB (Rollcall's own state)", Report.met(closedPer <= 2048)));
        report.add(new Report.Row("5. live threads at 100 / 10,000 workers (channels kept)",
                kept.get("threadsFew") + " / " + kept.get("threadsMany"),
                base.get("threadsFew") + " / " + base.get("threadsMany"),
                Report.lessIsBetter(kept.get("threadsMany"), base.get("threadsMany")),
                "does not grow with workers", Report.met(kept.get("threadsMany") <= kept.get("threadsFew"))));
        report.add(new Report.Row("5. peak threads while converging on 10,000",
                String.valueOf(kept.get("peak")), String.valueOf(base.get("peak")),
                Report.lessIsBetter(kept.get("peak"), base.get("peak")), "—", "—"));
        report.note("Memory (5): used heap after System.gc() with 10,000 workers tracked minus the same with none, in a"
                + " JVM of its own (-Xmx2g, G1) that has already converged on 100 workers (classes loaded); the three"
                + " configurations one after the other, each closed before the next."
                + " Channels closed: " + Report.bytes(closedPer) + " is Rollcall's own state (tracker entry, WorkerInfo,"
                + " the snapshot's status, indexes and lists, refresh timer); channels kept adds "
                + Report.bytes(keptPer - closedPer) + " per connected channel. Live threads are counted with the resolver"
                + " (or the baseline) running and converged; the JVM's own threads are included in both.");
    }

    /** Rollcall's own heap per kept worker: what it keeps beyond the bare channel and stream it holds open. */
    private static void bareChannel(Map<String, Long> kept, Map<String, Long> bare, Report report) {
        double keptPer = kept.get("heap") / (double) Plan.LARGE;
        double barePer = bare.get("heap") / (double) Plan.LARGE;
        double extra = keptPer - barePer;
        report.add(new Report.Row("5. … retained heap per kept worker beyond a bare channel with its stream open (the floor: " + Report.bytes(barePer) + ")",
                Report.bytes(extra) + " (" + Report.bytes(keptPer) + " − " + Report.bytes(barePer) + ")", "—", "—",
                "≤ 2 KiB", Report.met(extra <= 2048)));
    }

    /**
     * In the child JVM: Rollcall with channels kept, Rollcall with channels closed, a bare grpc-java
     * channel per worker with its {@code WatchWorkerInfo} stream open (what a kept worker holds,
     * without Rollcall; {@link PlainGrpcFloor}), then the baseline (last: gRPC's default executor keeps its idle threads for a minute), each printing
     * {@code RESULT <name> heap=<bytes> threadsFew=<n> threadsMany=<n> peak=<n>}.
     */
    static void childMain(Path urlsFile) throws Exception {
        List<WorkerEndpoint> fleet = Files.readAllLines(urlsFile).stream().map(WorkerEndpoint::parse).toList();
        measure("kept", "rollcall", true, fleet);
        measure("closed", "rollcall", false, fleet);
        measureBare(fleet);
        measure("baseline", "baseline", false, fleet);
    }

    private static void measureBare(List<WorkerEndpoint> fleet) throws Exception {
        PlainGrpcFloor.converge(fleet.subList(0, FEW), PlainGrpcFloor.Call.STREAM, null, null, null, null, null);
        long before = usedHeapAfterGc();
        long[] after = new long[1];
        PlainGrpcFloor.converge(fleet, PlainGrpcFloor.Call.STREAM, null, null, null, null,
                () -> after[0] = usedHeapAfterGc());
        System.out.println("RESULT bare heap=" + (after[0] - before));
        System.out.flush();
        System.err.printf("bare: %d -> %d bytes used%n", before, after[0]);
    }

    private static void measure(String name, String side, boolean keep, List<WorkerEndpoint> fleet) throws Exception {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long threadsFew;
        try (Tracking few = track(side, keep, fleet.subList(0, FEW))) {
            threadsFew = threads.getThreadCount();
        }
        long before = usedHeapAfterGc();
        threads.resetPeakThreadCount();
        try (Tracking many = track(side, keep, fleet)) {
            long threadsMany = threads.getThreadCount();
            long peak = threads.getPeakThreadCount();
            long after = usedHeapAfterGc();
            System.out.println("RESULT " + name + " heap=" + (after - before) + " threadsFew=" + threadsFew
                    + " threadsMany=" + threadsMany + " peak=" + peak);
            System.out.flush();
            System.err.printf("%s: %d -> %d bytes used, threads %d / %d, peak %d%n", name, before, after, threadsFew,
                    threadsMany, peak);
        }
    }

    /** A converged resolver or baseline, kept alive until closed. */
    private interface Tracking extends AutoCloseable {
        @Override
        void close();
    }

    private static Tracking track(String side, boolean keep, List<WorkerEndpoint> fleet) throws Exception {
        PushDiscovery discovery = new PushDiscovery("push[benchmark]");
        int n = fleet.size();
        if (side.equals("rollcall")) {
            WorkerResolver resolver = WorkerResolver.builder().name("footprint").discovery(discovery)
                    .policy(SemverRangePolicy.of("^1.0.0")).keepProbeChannels(keep)
                    .maxKeptChannels(Plan.LARGE).build(); // every worker kept: the cap would leave some out
            discovery.push(fleet);
            resolver.await(s -> s.counts().compatible() == n, Convergence.TIMEOUT);
            return resolver::close;
        }
        HandRolledResolver baseline = new HandRolledResolver(discovery::urls, Convergence.VERSION);
        discovery.push(fleet);
        baseline.start(Convergence.PERIOD);
        if (!baseline.awaitWorkers(n, Convergence.TIMEOUT)) {
            throw new IllegalStateException("baseline did not find " + n + " workers");
        }
        return baseline::close;
    }

    /** Used heap after full collections, once it stops falling. */
    static long usedHeapAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long last = Long.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            System.gc();
            Thread.sleep(100);
            long used = memory.getHeapMemoryUsage().getUsed();
            if (used >= last - 64 * 1024) {
                return Math.min(used, last);
            }
            last = used;
        }
        return last;
    }
}
