package dev.rollcall.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Scenario 9, a fleet of 100,000 ({@value #FULL_SIZE} in the full run, {@value #QUICK_SIZE} in the
 * quick one) without kept channels: {@value #SERVER_JVMS} servers JVMs ({@link AddressFleetMain})
 * with {@value #PORTS_PER_JVM} wildcard-bound gRPC servers each answer for {@code size / 4}
 * loopback addresses from {@code 127.1.0.1} upward on each port, 90 % of them with an accepted
 * version and 10 % with a rejected one; the coordinator runs in a JVM of its own
 * ({@link BigFleetCoordinator}): a resolver with {@code keepProbeChannels(false)} and the default
 * probe concurrency on a push discovery. Measured there: time until every URL has a verdict, probes
 * sent, retained heap per worker, peak file descriptors and threads of the coordinator JVM; then
 * 1 % churn. Then the same fleet with the defaults (kept channels on, as many as
 * {@code rollcall.probe.max-kept-channels} derives from the coordinator JVM's descriptor limit): it
 * must converge with its peak descriptors at most the cap + {@code probe.concurrency} + a constant
 * above its count before, and its heap is measured. {@code -Drollcall.bench.fleet.size=N} runs
 * another size (a smoke run: a small size under a low {@code ulimit -n} reaches the cap). There is no baseline column: the hand-written loop keeps no state worth comparing at
 * this size (scenario 2 compares it).
 */
final class BigFleet {

    static final int FULL_SIZE = 100_000;
    static final int QUICK_SIZE = 10_000; // still past the derived kept-channel cap (9,744 with 20,000 descriptors)
    static final int SERVER_JVMS = 2;
    static final int PORTS_PER_JVM = 2;
    /** Rollcall's default {@code rollcall.probe.concurrency}, which this scenario runs with. */
    static final int CONCURRENCY = 64;
    /** Descriptors a converged, idle coordinator JVM may hold above its count before the resolver started. */
    static final int CONSTANT_FDS = 32;
    // Ports for the wildcard servers: below Linux's ephemeral range (32768+), above ServerFleets' range use.
    private static final int FIRST_PORT = 9_000;
    private static final int LAST_PORT = 9_999;

    private BigFleet() {
    }

    static int size(Plan plan) {
        return Integer.getInteger("rollcall.bench.fleet.size", plan == Plan.QUICK ? QUICK_SIZE : FULL_SIZE);
    }

    static void run(Plan plan, Report report, Path logs) {
        int size = size(plan);
        int churn = (int) (size * Plan.CHURN);
        List<ChildJvm> servers = new ArrayList<>();
        try {
            List<String> ports = new ArrayList<>();
            int span = (LAST_PORT - FIRST_PORT + 1) / SERVER_JVMS;
            for (int i = 0; i < SERVER_JVMS; i++) {
                int first = FIRST_PORT + i * span;
                servers.add(ChildJvm.start("address-servers-" + i, List.of("-Xmx1g", "-XX:+UseParallelGC", "-Xss256k"),
                        AddressFleetMain.class, List.of(String.valueOf(PORTS_PER_JVM), String.valueOf(first),
                                String.valueOf(first + span - 1)), logs.resolve("address-servers-" + i + ".log")));
            }
            for (ChildJvm s : servers) {
                ports.addAll(Arrays.asList(s.awaitLine("PORTS ").split(",")));
            }
            System.out.printf(Locale.ROOT, "fleet of %,d: %d server JVMs listening on 0.0.0.0 ports %s; %,d loopback"
                    + " addresses from %s%n", size, SERVER_JVMS, ports, size / ports.size(), AddressFleetMain.address(0));
            Map<String, Long> r = coordinate("closed", size, churn, ports, servers, logs);
            long answered = answered(servers);
            report(size, churn, ports.size(), r, answered, report);
            Map<String, Long> d = coordinate("defaults", size, churn, ports, servers, logs);
            reportDefaults(size, d, answered(servers) - answered, report);
        } finally {
            servers.forEach(ChildJvm::close);
        }
    }

    /** One coordinator JVM's run in {@code mode} ({@code closed} or {@code defaults}): its RESULT values. */
    private static Map<String, Long> coordinate(String mode, int size, int churn, List<String> ports,
                                                List<ChildJvm> servers, Path logs) {
        String name = mode.equals("closed") ? "fleet-coordinator" : "fleet-coordinator-" + mode;
        try (ChildJvm coordinator = ChildJvm.start(name, List.of("-Xmx3g", "-XX:+UseG1GC"),
                BigFleetCoordinator.class, List.of(String.valueOf(size), String.valueOf(churn),
                        String.join(",", ports), String.valueOf(CONCURRENCY), mode),
                logs.resolve(name + ".log"))) {
            coordinator.awaitLine("PHASE converging");
            long serversCpuStart = serversCpu(servers);
            coordinator.awaitLine("PHASE converged");
            long serversCpu = serversCpu(servers) - serversCpuStart;
            Map<String, Long> r = new HashMap<>(Footprint.values(coordinator.awaitLine("RESULT ")));
            r.put("serversCpu", serversCpu);
            return r;
        }
    }

    /** WorkerInfo calls the servers answered so far. */
    private static long answered(List<ChildJvm> servers) {
        long answered = 0;
        for (ChildJvm s : servers) {
            s.send("answered");
            answered += Long.parseLong(s.awaitLine("ANSWERED "));
        }
        return answered;
    }

    /** The rows of the run with the defaults: kept channels up to the derived cap. */
    private static void reportDefaults(int size, Map<String, Long> r, long answered, Report report) {
        String n = Report.count(size);
        long nanos = r.get("nanos");
        long cap = r.get("cap");
        long over = r.get("overKeptCap");
        boolean allAnswered = r.get("rejected").equals(r.get("expectedRejected"))
                && r.get("compatible") + r.get("rejected") == size && r.get("unreachable") == 0;
        report.add(new Report.Row("9. converge on " + n + " fresh workers with the defaults (kept channels,"
                        + " `max-kept-channels` derived: " + Report.count(cap) + ")",
                Report.duration(nanos) + String.format(Locale.ROOT, " (%,.0f probes/s; %s kept, %s without: overKeptCap)",
                        r.get("probes") / (nanos / 1e9), Report.count(Math.min(cap, size)), Report.count(over)),
                "—", "—", "every URL a verdict; overKeptCap = " + Report.count(Math.max(0, size - cap)),
                Report.met(allAnswered && over == Math.max(0, size - cap))));
        long bound = r.get("fdsBefore") + Math.min(cap, size) + CONCURRENCY + CONSTANT_FDS;
        report.add(new Report.Row("9. peak file descriptors with the defaults while converging on " + n,
                r.get("fdsPeak") + " (" + r.get("fdsBefore") + " before: +" + (r.get("fdsPeak") - r.get("fdsBefore"))
                        + "; sockets " + r.get("beforeSockets") + " → " + r.get("peakSockets") + "); converged "
                        + r.get("fdsConverged") + "; churn peak " + r.get("churnFdsPeak"),
                "—", "—", "≤ before + the cap + probe.concurrency (" + CONCURRENCY + ") + " + CONSTANT_FDS,
                Report.met(r.get("fdsPeak") <= bound && r.get("churnFdsPeak") <= bound)));
        double perWorker = (r.get("heapAfter") - r.get("heapBefore")) / (double) size;
        report.add(new Report.Row("9. retained heap per worker at " + n + " with the defaults (after GC)",
                Report.bytes(perWorker) + " (" + Report.bytes(r.get("heapAfter") - r.get("heapBefore")) + " in all)",
                "—", "—", "measured", "—"));
        report.note(String.format(Locale.ROOT, "Fleet (9) with the defaults: the same fleet and servers, a coordinator"
                        + " JVM of its own with no setting but the policy and the push discovery; its descriptor limit"
                        + " gave `rollcall.probe.max-kept-channels` %,d (half the limit less 256, 64 to 10,000). The"
                        + " servers answered %,d WorkerInfo calls and streams for it; churn converged in %s with %,d"
                        + " probes.", cap, answered, Report.duration(r.get("churnNanos")), r.get("churnProbes")));
    }

    /** CPU time the servers JVMs have used so far, in nanoseconds. */
    private static long serversCpu(List<ChildJvm> servers) {
        long sum = 0;
        for (ChildJvm s : servers) {
            s.send("cpu");
            sum += Long.parseLong(s.awaitLine("CPU "));
        }
        return sum;
    }

    private static void report(int size, int churn, int ports, Map<String, Long> r, long answered, Report report) {
        String n = Report.count(size);
        long nanos = r.get("nanos");
        long probes = r.get("probes");
        boolean allAnswered = r.get("rejected").equals(r.get("expectedRejected"))
                && r.get("compatible") + r.get("rejected") == size && r.get("unreachable") == 0;
        report.add(new Report.Row("9. converge on " + n + " fresh workers, `keepProbeChannels(false)` (" + ports
                        + " ports × " + Report.count(size / ports) + " loopback addresses, " + SERVER_JVMS
                        + " server JVMs)",
                Report.duration(nanos) + String.format(Locale.ROOT, " (%,.0f probes/s; %s accepted, %s rejected)",
                        probes / (nanos / 1e9), Report.count(r.get("compatible")), Report.count(r.get("rejected"))),
                "—", "—", "every URL a verdict, the 10 % rejected", Report.met(allAnswered)));
        report.add(new Report.Row("9. probes sent to converge on " + n, Report.count(probes)
                        + (r.get("failed") > 0 ? " (" + Report.count(r.get("failed")) + " failed)" : ""),
                "—", "—", "= " + n, Report.met(probes == size)));
        double perWorker = (r.get("heapAfter") - r.get("heapBefore")) / (double) size;
        report.add(new Report.Row("9. retained heap per worker at " + n + " (after GC)", Report.bytes(perWorker),
                "—", "—", "≤ 2 KiB", Report.met(perWorker <= 2048)));
        long fdsAbove = r.get("fdsPeak") - r.get("fdsBefore");
        report.add(new Report.Row("9. peak file descriptors of the coordinator JVM while converging on " + n,
                r.get("fdsPeak") + " (" + r.get("fdsBefore") + " before the resolver: +" + fdsAbove + "; sockets "
                        + r.get("beforeSockets") + " → " + r.get("peakSockets") + " at the peak); converged "
                        + r.get("fdsConverged") + "; churn peak " + r.get("churnFdsPeak"),
                "—", "—", "≤ before + probe.concurrency (" + CONCURRENCY + ") + " + CONSTANT_FDS,
                Report.met(r.get("fdsPeak") <= r.get("fdsBefore") + CONCURRENCY + CONSTANT_FDS
                        && r.get("churnFdsPeak") <= r.get("fdsBefore") + CONCURRENCY + CONSTANT_FDS)));
        double perProbe = r.get("cpu") / (double) probes;
        double serversPerProbe = r.get("serversCpu") / (double) probes;
        report.add(new Report.Row("9. CPU per probe while converging on " + n + ": coordinator / servers",
                Report.duration(perProbe) + " / " + Report.duration(serversPerProbe)
                        + " (a new connection each)", "—", "—", "—", "—"));
        report.add(new Report.Row("9. live threads of the coordinator JVM: before / peak while converging / converged",
                r.get("threadsBefore") + " / " + r.get("threadsPeak") + " / " + r.get("threadsConverged"), "—", "—",
                "does not grow with workers", Report.met(r.get("threadsConverged") <= r.get("threadsBefore") + 4)));
        report.add(new Report.Row("9. converge after 1 % churn of " + n + " (" + Report.count(churn) + " replaced)",
                Report.duration(r.get("churnNanos")) + " with " + Report.count(r.get("churnProbes")) + " probes", "—",
                "—", "probes = " + Report.count(churn) + " (the new URLs only)",
                Report.met(r.get("churnProbes") == churn)));
        report.note(String.format(Locale.ROOT, "Fleet (9): %d server JVMs, each with %d grpc-java servers bound to"
                        + " 0.0.0.0, answer for %,d loopback addresses 127.1.0.1 upward (Linux routes 127.0.0.0/8 to lo);"
                        + " each answer is made from the connection's local address (`Grpc.TRANSPORT_ATTR_LOCAL_ADDR`):"
                        + " every tenth address reports 2.0.0, rejected by `^1.0.0`. The coordinator runs alone in its"
                        + " JVM (-Xmx3g, G1), converged once on 1,000 of them first (untimed: classes, event loops);"
                        + " defaults except `keepProbeChannels(false)` (%d probes in flight). The servers answered %,d"
                        + " WorkerInfo calls in all; the coordinator sent %,d (%,d by the warm-up's resolver, %,d + %,d"
                        + " by the measured one). Descriptors: /proc/self/fd counted"
                        + " every 5 ms. Heap: used heap after System.gc() with the fleet tracked minus before the"
                        + " resolver started, ÷ %,d.",
                SERVER_JVMS, PORTS_PER_JVM, size / ports, CONCURRENCY, answered,
                r.get("warmProbes") + r.get("probes") + r.get("churnProbes"), r.get("warmProbes"), r.get("probes"),
                r.get("churnProbes"), size));
    }
}
