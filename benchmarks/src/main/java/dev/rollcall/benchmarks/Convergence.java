package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.RollcallMetrics;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 2, convergence: from the moment discovery publishes a fresh set of real workers to the
 * first state in which a reader sees all of them; then 1 % of them replaced by new ones. Also the
 * probe round trips while converging, and a fresh JVM's first 1,000.
 *
 * <p>Rollcall: a new resolver (defaults: 64 probes in flight, channels kept) on a {@link PushDiscovery};
 * the clock runs from {@code publish} to {@code resolver.await(all compatible)} returning. Probe
 * latency comes from {@link RollcallMetrics}' {@code rollcall.probe.latency} timer. Baseline: a new
 * {@link HandRolledResolver} whose pass starts right at the publish (its best case: a 5 s period
 * that happens to tick then); the clock stops when the pass that sees them all returns.
 */
final class Convergence {

    static final String VERSION = "1.0.0";
    static final Duration TIMEOUT = Duration.ofSeconds(120);
    static final Duration PERIOD = Duration.ofSeconds(5);

    /** Percentiles for the probe timer, which RollcallMetrics registers without them. */
    static final MeterFilter PERCENTILES = new MeterFilter() {
        @Override
        public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
            if (!id.getName().equals("rollcall.probe.latency")) {
                return config;
            }
            return DistributionStatisticConfig.builder().percentiles(0.5, 0.99).percentilePrecision(2)
                    .expiry(Duration.ofHours(1)).bufferLength(1).build().merge(config);
        }
    };


    /** The floor's probe p99 per call and fleet size ("UNARY 10000"), one per timed rep. */
    private static final Map<String, List<Long>> FLOOR_P99 = new java.util.HashMap<>();
    /** The floor's runs per call and fleet size, one per timed rep: their heap allocation and GC pauses. */
    private static final Map<String, List<ConvergenceRun>> FLOOR_RUNS = new java.util.HashMap<>();

    /** The workers' JVMs of the scenario running now, collected in {@link #settle()}; null before. */
    private static volatile ServerFleets workers;

    /** The untimed warm-up rounds at 10,000 of the last run (for the note). */
    private static List<Long> warmLarge = List.of();

    private Convergence() {
    }

    static void run(Plan plan, ServerFleets fleets, Report report, Path logs) throws Exception {
        workers = fleets;
        List<WorkerEndpoint> all = fleets.endpoints();
        int small = Plan.SMALL;
        int large = Plan.LARGE;
        List<WorkerEndpoint> smallFleet = all.subList(0, small);
        // Each run churns Plan.CHURNS times, each time replacing 1 % of the fleet with workers it never saw.
        List<WorkerEndpoint> smallSpares = all.subList(small, small + Plan.CHURNS * (int) (small * Plan.CHURN));
        List<WorkerEndpoint> largeFleet = all.subList(0, large);
        List<WorkerEndpoint> largeSpares = all.subList(large, large + Plan.CHURNS * (int) (large * Plan.CHURN));

        System.out.println("convergence: warming the JVM up for " + plan.warmUpSeconds() + " s");
        long warmEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(plan.warmUpSeconds());
        int warmRounds = 0;
        while (System.nanoTime() < warmEnd) {
            rollcall("warm-" + warmRounds, smallFleet, smallSpares);
            baseline(smallFleet, smallSpares);
            PlainGrpcFloor.converge(smallFleet);
            warmRounds++;
        }
        // Untimed rounds at full size (plain gRPC, then Rollcall) until the workers' JVMs are warm
        // (two plain rounds within 15 % of each other, at most five): real workers are long-running
        // processes, and 4,000 of them in one JVM whose JIT is still compiling their call paths
        // charge its warm-up to whichever side runs first (runs at 10,000 took 3.6, 3.1 and 2.1 s
        // one after another; the workers' JVMs spent 10.6 s of CPU on the first, 1.5 s on a later one).
        // The quick run stops at three: on a slow day five took 100 s of its 10 minutes (2026-12-05:
        // 10 min 37 s), and its three reps at 10,000 let each side go first once anyway.
        int[] round = {0};
        warmLarge = untilSteady(plan == Plan.QUICK ? 3 : 5, () -> {
            long nanos = PlainGrpcFloor.converge(largeFleet);
            settle();
            // The workers serve Rollcall's WatchWorkerInfo stream on another path than the unary call.
            // Its churns too: the floor's churn is its convergence's path, Rollcall's is another
            // (leavers forgotten, newcomers beside 9,900 held streams), and without them here the
            // JIT compiled it in the first timed rep's churns (up to 45 ms of the JIT's CPU in one;
            // the quick run's median churn came from that rep: 33.3 ms, 25.6 without it).
            rollcall("warm-large-" + round[0]++, largeFleet, largeSpares);
            settle();
            return nanos;
        });
        System.out.println("    workers' JVMs warmed up by rounds on 10,000 (plain gRPC's times): "
                + warmLarge.stream().map(n -> Report.duration(n)).toList());

        List<ConvergenceRun> rSmall = new ArrayList<>();
        List<ConvergenceRun> bSmall = new ArrayList<>();
        long[] fSmall = new long[plan.repsSmall()];
        long[] fsSmall = new long[plan.repsSmall()]; // the floor making Rollcall's call, the stream
        List<Long> fcSmall = new ArrayList<>(); // the floor of a churn: plain gRPC probing only the new URLs
        for (int i = 0; i < plan.repsSmall(); i++) {
            // Each rep runs the three in another order, so that no side always goes first.
            for (int k = 0; k < 3; k++) {
                switch ((i + k) % 3) {
                    case 0 -> rSmall.add(rollcall("small-" + i, smallFleet, smallSpares));
                    case 1 -> bSmall.add(baseline(smallFleet, smallSpares));
                    default -> {
                        fSmall[i] = floorLogged(smallFleet, PlainGrpcFloor.Call.UNARY);
                        fcSmall.addAll(floorChurns(small, smallSpares));
                        settle();
                        fsSmall[i] = floorLogged(smallFleet, PlainGrpcFloor.Call.STREAM);
                    }
                }
                settle();
            }
        }
        List<ConvergenceRun> rLarge = new ArrayList<>();
        List<ConvergenceRun> bLarge = new ArrayList<>();
        long[] fLarge = new long[plan.repsLarge()];
        long[] fsLarge = new long[plan.repsLarge()];
        List<Long> fcLarge = new ArrayList<>();
        List<Long> fcsLarge = new ArrayList<>(); // the churn floor holding the fleet's streams open, as Rollcall
        for (int i = 0; i < plan.repsLarge(); i++) {
            // Each rep runs the three in another order: the JIT is still warming up at this size, and
            // whoever runs first pays for it; three reps (quick) let each side go first once, six
            // (full) twice. The plain floor at 10,000 varied by ×1.5 within an hour, and with three
            // reps a table's ratio moved with whichever run was the median.
            for (int k = 0; k < 3; k++) {
                switch ((i + k) % 3) {
                    case 0 -> rLarge.add(rollcall("large-" + i, largeFleet, largeSpares));
                    case 1 -> bLarge.add(baseline(largeFleet, largeSpares));
                    default -> {
                        fLarge[i] = floorLogged(largeFleet, PlainGrpcFloor.Call.UNARY);
                        fcLarge.addAll(floorChurns(large, largeSpares));
                        if (plan != Plan.QUICK) { // informational, and the quick run's 10 minutes are tight
                            settle();
                            fsLarge[i] = floorLogged(largeFleet, PlainGrpcFloor.Call.STREAM);
                        }
                        if (plan != Plan.QUICK) { // informational; five churns a side said nothing (×0.90–×1.69)
                            settle();
                            fcsLarge.addAll(heldFloorChurns(largeFleet, largeSpares));
                        }
                    }
                }
                settle();
            }
        }

        // Channels closed (keepProbeChannels(false), as past the kept-channel cap) at 10,000: Rollcall against
        // plain grpc-java shutting each channel down at its answer, and the same churn floor (plain grpc-java
        // probes a churn's newcomers over new channels either way).
        int repsClosed = Math.max(1, plan.repsLarge() / 3);
        List<ConvergenceRun> rClosed = new ArrayList<>();
        long[] fClosed = new long[repsClosed];
        List<Long> fccLarge = new ArrayList<>(); // the churn floor shutting each newcomer's channel down, as Rollcall
        // Untimed, as the kept mode's warm-up rounds: channels closed at each answer is another path
        // again, and its first timed churns had the JIT compiling it (1–299 ms of its CPU a churn).
        rollcall("warm-closed", largeFleet, largeSpares, false);
        settle();
        for (int i = 0; i < repsClosed; i++) {
            for (int k = 0; k < 2; k++) {
                if ((i + k) % 2 == 0) {
                    rClosed.add(rollcall("closed-" + i, largeFleet, largeSpares, false));
                } else {
                    fClosed[i] = floorLogged(largeFleet, PlainGrpcFloor.Call.UNARY_CLOSED);
                    fccLarge.addAll(floorChurns(large, largeSpares, PlainGrpcFloor.Call.UNARY_CLOSED));
                }
                settle();
            }
        }

        ConvergenceRun rs = ConvergenceRun.typical(rSmall);
        ConvergenceRun bs = ConvergenceRun.typical(bSmall);
        ConvergenceRun rl = ConvergenceRun.typical(rLarge);
        ConvergenceRun bl = ConvergenceRun.typical(bLarge);
        String ofSmall = " (median of " + plan.repsSmall() + ")";
        String ofLarge = plan.repsLarge() > 1 ? " (median of " + plan.repsLarge() + ")" : " (one run)";
        report.add(new Report.Row("2. converge on 1,000 fresh workers, warm JVM" + ofSmall,
                Report.duration(rs.nanos()), Report.duration(bs.nanos()), Report.lessIsBetter(rs.nanos(), bs.nanos()),
                "≤ 0.35 s", Report.met(rs.nanos() <= 350e6)));
        report.add(new Report.Row("2. converge on 10,000 fresh workers, warm JVM" + ofLarge,
                Report.duration(rl.nanos()), Report.duration(bl.nanos()), Report.lessIsBetter(rl.nanos(), bl.nanos()),
                "≤ 3.5 s", Report.met(rl.nanos() <= 3.5e9)));
        long fs = Latencies.median(fSmall);
        long fl = Latencies.median(fLarge);
        report.add(new Report.Row("2. … the same against plain grpc-java in this run (the floor: 1,000 / 10,000)",
                Report.times(rs.nanos() / (double) fs) + " / " + Report.times(rl.nanos() / (double) fl) + " the floor",
                Report.times(bs.nanos() / (double) fs) + " / " + Report.times(bl.nanos() / (double) fl) + " the floor",
                "floor " + Report.duration(fs) + " / " + Report.duration(fl), "≤ ×1.25 the floor, ahead of the baseline",
                Report.met(rs.nanos() <= 1.25 * fs && rl.nanos() <= 1.25 * fl
                        && rs.nanos() < bs.nanos() && rl.nanos() < bl.nanos())));
        long fss = Latencies.median(fsSmall);
        long fsl = Latencies.median(fsLarge);
        boolean streamLarge = plan != Plan.QUICK;
        report.add(new Report.Row("2. … against plain grpc-java opening Rollcall's stream (WatchWorkerInfo, kept open; the floor:"
                + " 1,000 / 10,000"
                + (streamLarge ? ")" : ", the full run only)"),
                Report.times(rs.nanos() / (double) fss) + (streamLarge ? " / " + Report.times(rl.nanos() / (double) fsl) : "")
                        + " the floor",
                Report.times(bs.nanos() / (double) fss) + (streamLarge ? " / " + Report.times(bl.nanos() / (double) fsl) : "")
                        + " the floor",
                "floor " + Report.duration(fss) + (streamLarge ? " / " + Report.duration(fsl) : ""), "—", "—"));
        report.add(latencyRow("2. probe latency p50 / p99 while converging on 1,000", rs, bs, small));
        report.add(latencyRow("2. probe latency p50 / p99 while converging on 10,000", rl, bl, large));
        // Each side's churns are a measurement of their own: the median of all its churns in all reps,
        // as the floor's (not the churns that followed the median convergence). One churn at 10,000
        // takes tens of milliseconds, and the reps of one run differed by ×1.5–×2: five a rep.
        long rcs = ConvergenceRun.medianChurn(rSmall);
        long bcs = ConvergenceRun.medianChurn(bSmall);
        long rcl = ConvergenceRun.medianChurn(rLarge);
        long bcl = ConvergenceRun.medianChurn(bLarge);
        String churnsSmall = " (median of " + plan.repsSmall() * Plan.CHURNS + ")";
        String churnsLarge = " (median of " + plan.repsLarge() * Plan.CHURNS + ")";
        report.add(new Report.Row("2. converge after 1 % churn of 1,000 (10 replaced)" + churnsSmall,
                Report.duration(rcs), Report.duration(bcs), Report.lessIsBetter(rcs, bcs), "—", "—"));
        report.add(new Report.Row("2. converge after 1 % churn of 10,000 (100 replaced)" + churnsLarge,
                Report.duration(rcl), Report.duration(bcl), Report.lessIsBetter(rcl, bcl), "—", "—"));
        long fcs = Latencies.median(fcSmall.stream().mapToLong(Long::longValue).toArray());
        long fcl = Latencies.median(fcLarge.stream().mapToLong(Long::longValue).toArray());
        report.add(new Report.Row("2. … churn against plain grpc-java probing only the new URLs (the floor: 10 / 100)",
                Report.times(rcs / (double) fcs) + " / " + Report.times(rcl / (double) fcl) + " the floor",
                Report.times(bcs / (double) fcs) + " / " + Report.times(bcl / (double) fcl) + " the floor",
                "floor " + Report.duration(fcs) + " / " + Report.duration(fcl), "≤ ×1.25 the floor, ahead of the baseline",
                Report.met(rcs <= 1.25 * fcs && rcl <= 1.25 * fcl && rcs < bcs && rcl < bcl)));
        // Issue 42's tails, in both modes: the churn of 10,000 and the probe p99 at 10,000 against the floor.
        ConvergenceRun rc = ConvergenceRun.typical(rClosed);
        long fcl99 = floorP99(PlainGrpcFloor.Call.UNARY, large);
        long fclosed = Latencies.median(fClosed);
        long fclosed99 = floorP99(PlainGrpcFloor.Call.UNARY_CLOSED, large);
        long rcc = ConvergenceRun.medianChurn(rClosed);
        String ofClosed = repsClosed > 1 ? " (median of " + repsClosed + ")" : " (one run)";
        report.add(new Report.Row("2. converge on 10,000 fresh workers, `keepProbeChannels(false)`, against the floor closing"
                + " each channel at its answer" + ofClosed,
                Report.duration(rc.nanos()) + " (" + Report.times(rc.nanos() / (double) fclosed) + " the floor)", "—",
                "floor " + Report.duration(fclosed), "≤ ×1.25 the floor", Report.met(rc.nanos() <= 1.25 * fclosed)));
        // Each mode against the floor doing that mode's work, as its fresh convergence and its probe p99 are: with
        // channels closed, Rollcall shuts each newcomer's connection down at its answer and gives its slot back once
        // the socket is gone (at most probe.concurrency sockets), so its floor is plain grpc-java shutting each
        // channel down at its answer; the floor keeping its channels open is in the row after.
        long fccl = Latencies.median(fccLarge.stream().mapToLong(Long::longValue).toArray());
        report.add(new Report.Row("2. churn of 10,000 (100 replaced) against the floor, channels kept / closed (median of "
                + plan.repsLarge() * Plan.CHURNS + " / " + repsClosed * Plan.CHURNS + "; closed: the floor closing each newcomer's channel)",
                Report.duration(rcl) + " / " + Report.duration(rcc) + " (" + Report.times(rcl / (double) fcl) + " / "
                        + Report.times(rcc / (double) fccl) + " the floor)", "—",
                "floor " + Report.duration(fcl) + " / " + Report.duration(fccl),
                "≤ ×1.25 the floor", Report.met(rcl <= 1.25 * fcl && rcc <= 1.25 * fccl)));
        if (!fcsLarge.isEmpty()) {
            // With channels kept, Rollcall churns while it holds the fleet's 10,000 WatchWorkerInfo streams, with
            // their heartbeats and keepalive pings; the floor above holds nothing. The same churn with plain grpc-java
            // holding its own 10,000 streams that way while it opens the newcomers', for comparison (not a target).
            long fcsl = Latencies.median(fcsLarge.stream().mapToLong(Long::longValue).toArray());
            report.add(new Report.Row("2. … the same churn, channels kept, against plain grpc-java holding the fleet's"
                    + " 10,000 streams open as Rollcall does (heartbeats every 5 s, keepalive) while it opens the newcomers'"
                    + " (median of " + fcsLarge.size() + "; informational)",
                    Report.duration(rcl) + " (" + Report.times(rcl / (double) fcsl) + ")", "—",
                    "floor " + Report.duration(fcsl), "—", "—"));
        }
        report.add(new Report.Row("2. … the same churn, channels closed, against the kept mode's floor (informational)",
                Report.duration(rcc) + " (" + Report.times(rcc / (double) fcl) + ")", "—",
                "floor " + Report.duration(fcl), "—", "—"));
        report.add(new Report.Row("2. probe p99 while converging on 10,000 against the floor's, channels kept / closed",
                Report.duration(rl.p99()) + " / " + Report.duration(rc.p99()) + " (" + Report.times(rl.p99() / (double) fcl99)
                        + " / " + Report.times(rc.p99() / (double) fclosed99) + " the floor's)", "—",
                "floor's p99 " + Report.duration(fcl99) + " / " + Report.duration(fclosed99), "≤ ×1.1 the floor's",
                Report.met(rl.p99() <= 1.1 * fcl99 && rc.p99() <= 1.1 * fclosed99)));
        report.add(allocationRow(rLarge, FLOOR_RUNS.getOrDefault(PlainGrpcFloor.Call.UNARY + " " + large, List.of())));
        int perChurn = (int) (large * Plan.CHURN);
        long rMost = ConvergenceRun.mostChurnProbes(rLarge);
        long bMost = ConvergenceRun.mostChurnProbes(bLarge);
        report.add(new Report.Row("3. probes per churn event: 100 of 10,000 replaced (the most in any churn)",
                Report.count(rMost), Report.count(bMost), Report.lessIsBetter(rMost, bMost), "= 100 (the new URLs only)",
                Report.met(rLarge.stream().flatMapToLong(r -> java.util.Arrays.stream(r.churnProbes()))
                        .allMatch(p -> p == perChurn))));
        report.note("Convergence (2): the floor is plain grpc-java probing the same workers in the same run, in"
                + " the order Rollcall and the baseline are handed them (discovery's set), with"
                + " every saving the limits assume (shared 2-thread event loop, directExecutor, resolved addresses,"
                + " 64 in flight, channels kept) and nothing else; the targets' 0.35 s and 3.5 s are 1.75× a floor of"
                + " 0.2 s and 2 s measured on a quiet machine.");
        report.note("Convergence (2): the baseline's pass starts at the very moment of the publish, its best case;"
                + " with its 5 s period it starts on average 2.5 s later, which the table leaves out."
                + " The JVM was warmed up by " + warmRounds + " round" + (warmRounds == 1 ? "" : "s") + " of all three on"
                + " 1,000 workers (" + plan.warmUpSeconds() + " s) and " + warmLarge.size() + " untimed rounds of"
                + " plain gRPC and Rollcall on 10,000, Rollcall's with its five churns (until two plain ones were within 15 % of each other, so that the"
                + " workers' JVMs are warm:"
                + " " + warmLarge.stream().map(Report::duration).toList() + ")"
                + "; every rep runs the three sides in another order, so that each goes first as often as the others"
                + (plan == Plan.QUICK ? " (the quick run's warm-up is short: at 10,000 the JIT is still warming up)" : "")
                + ". Every run builds a new resolver (and new channels): 'fresh' means never probed by it.");

        Path urls = Files.createTempFile(logs, "fleet-", ".txt");
        Files.write(urls, smallFleet.stream().map(WorkerEndpoint::url).toList());
        long[] rFresh = new long[plan.freshJvms()];
        long[] bFresh = new long[plan.freshJvms()];
        for (int i = 0; i < plan.freshJvms(); i++) {
            rFresh[i] = fresh("rollcall", urls, logs);
            bFresh[i] = fresh("baseline", urls, logs);
        }
        long rf = Latencies.median(rFresh);
        long bf = Latencies.median(bFresh);
        report.add(new Report.Row("2. a fresh JVM's first 1,000 workers"
                + (plan.freshJvms() > 1 ? " (median of " + plan.freshJvms() + " JVMs)" : " (one JVM)"),
                Report.duration(rf), Report.duration(bf), Report.lessIsBetter(rf, bf), "≤ 4 s", Report.met(rf <= 4e9)));
    }

    private static Report.Row latencyRow(String scenario, ConvergenceRun r, ConvergenceRun b, int size) {
        long unary = floorP99(PlainGrpcFloor.Call.UNARY, size);
        long stream = floorP99(PlainGrpcFloor.Call.STREAM, size);
        return new Report.Row(scenario, Report.duration(r.p50()) + " / " + Report.duration(r.p99()),
                Report.duration(b.p50()) + " / " + Report.duration(b.p99()), "p99 " + Report.lessIsBetter(r.p99(), b.p99())
                        + "; the floor's p99 " + Report.duration(unary) + " (×" + String.format(Locale.ROOT, "%.2f",
                        r.p99() / (double) unary) + ")" + (FLOOR_P99.containsKey(PlainGrpcFloor.Call.STREAM + " " + size)
                        ? ", with the stream " + Report.duration(stream) + " (×"
                        + String.format(Locale.ROOT, "%.2f", r.p99() / (double) stream) + ")" : ""),
                "p99 < 50 ms", Report.met(r.p99() < 50e6));
    }

    /**
     * What each side allocated while converging on 10,000 with channels kept, and its GC pauses: the
     * probe p99 at that size is mostly young-collection pauses (history, the eleventh round), and
     * how often the young generation is collected follows the allocation (informational).
     */
    private static Report.Row allocationRow(List<ConvergenceRun> rollcall, List<ConvergenceRun> floor) {
        long rMb = ConvergenceRun.medianOf(rollcall, "(allocated MB)");
        long fMb = ConvergenceRun.medianOf(floor, "(allocated MB)");
        return new Report.Row("2. … heap allocated converging on 10,000, channels kept; GC pauses and collections (median of " + rollcall.size() + " / " + floor.size() + "; informational)",
                rMb + " MB (" + Report.times(rMb / (double) Math.max(1, fMb)) + "), pauses " + ConvergenceRun.medianOf(rollcall, "(gc pauses)")
                        + " ms in " + ConvergenceRun.medianOf(rollcall, "(gc count)"), "—",
                "floor " + fMb + " MB, pauses " + ConvergenceRun.medianOf(floor, "(gc pauses)") + " ms in " + ConvergenceRun.medianOf(floor, "(gc count)"),
                "—", "—");
    }


    /** The median over the timed reps of the floor's probe p99 with {@code call} at {@code size}. */
    private static long floorP99(PlainGrpcFloor.Call call, int size) {
        return Latencies.median(FLOOR_P99.getOrDefault(call + " " + size, List.of()).stream()
                .mapToLong(Long::longValue).toArray());
    }

    /**
     * Runs untimed warm-up {@code round}s (each returns the time it compares) until two in a row are
     * within 15 % of each other, at most {@code maxRounds}; returns their times.
     */
    static List<Long> untilSteady(int maxRounds, java.util.concurrent.Callable<Long> round) throws Exception {
        List<Long> times = new ArrayList<>();
        for (int i = 0; i < maxRounds; i++) {
            long now = round.call();
            times.add(now);
            if (i > 0 && Math.abs(now - times.get(i - 1)) <= 0.15 * Math.min(now, times.get(i - 1))) {
                break;
            }
        }
        return times;
    }

    /**
     * Lets the workers' JVMs finish closing the last run's connections before the next run starts:
     * waits until they use less than a tenth of a core over 100 ms (at most 10 s), after a GC in
     * this JVM; then collects their heaps. Closing 10,000 connections keeps them busy for a second or
     * more, and a run that starts meanwhile pays for the run before it; and a young collection of
     * theirs (40–720 ms each on two cores shared with this JVM, up to one a convergence) lands on
     * whichever side happens to be running.
     */
    static void settle() throws InterruptedException {
        System.gc();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long before = childrenCpu();
        do {
            Thread.sleep(100);
            long now = childrenCpu();
            if (now - before < TimeUnit.MILLISECONDS.toNanos(10)) {
                break;
            }
            before = now;
        } while (System.nanoTime() < end);
        ServerFleets fleets = workers;
        if (fleets != null) {
            fleets.collectGarbage();
        }
    }

    /** A new resolver converges on {@code fleet}, then on {@code fleet} with its first spares.size() replaced. */
    static ConvergenceRun rollcall(String name, List<WorkerEndpoint> fleet, List<WorkerEndpoint> spares) throws Exception {
        return rollcall(name, fleet, spares, true);
    }

    /** As above; {@code keep} false: {@code keepProbeChannels(false)}, a connection per probe. */
    static ConvergenceRun rollcall(String name, List<WorkerEndpoint> fleet, List<WorkerEndpoint> spares, boolean keep)
            throws Exception {
        int n = fleet.size();
        PushDiscovery discovery = new PushDiscovery("push[benchmark]");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(PERCENTILES);
        // Every worker kept, as the floor keeps every channel: the cap this machine's descriptor limit derives
        // (20,000: 9,744) left 256 of 10,000, and a churn's newcomers while the leavers' channels were still
        // open, probed over a connection each, which the floor never is.
        try (WorkerResolver resolver = WorkerResolver.builder().name("bench-" + name).discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0.0")).keepProbeChannels(keep)
                .maxKeptChannels(fleet.size() + spares.size()).build()) {
            new RollcallMetrics(resolver).bindTo(registry);
            Map<String, Long> threadsBefore = ThreadCpu.byGroup();
            KernelCounters.Snapshot kernelBefore = KernelCounters.now();
            long cpuBefore = processCpu();
            long serverBefore = childrenCpu();
            // The chart's curve: compatible workers at each snapshot the listener is handed (latest wins).
            List<Long> at = new java.util.concurrent.CopyOnWriteArrayList<>();
            List<Integer> compatible = new java.util.concurrent.CopyOnWriteArrayList<>();
            long start = System.nanoTime();
            var curve = resolver.addListener(s -> {
                at.add(System.nanoTime() - start);
                compatible.add(s.counts().compatible());
            });
            discovery.push(fleet);
            long snapshots = resolver.await(s -> s.counts().compatible() == n, TIMEOUT).number();
            long nanos = System.nanoTime() - start;
            Timeline.mark(java.time.Instant.now().minusNanos(nanos), "rollcall " + name + " converged on " + n, nanos);
            curve.close();
            if (!name.startsWith("warm")) {
                at.add(nanos);
                compatible.add(n);
                chartCurve(n, "Rollcall", Charts.seconds(at), Charts.doubles(compatible));
            }
            long cpu = processCpu() - cpuBefore;
            long serverCpu = childrenCpu() - serverBefore;
            long[] kernel = KernelCounters.since(kernelBefore);
            Map<String, Long> threadCpu = ThreadCpu.since(threadsBefore);
            HistogramSnapshot latency = registry.get("rollcall.probe.latency").tag("outcome", "answered").timer()
                    .takeSnapshot();
            long probes = resolver.probesSent();
            int churns = spares.isEmpty() ? 0 : Plan.CHURNS;
            long[] churnNanos = new long[churns];
            long[] churnProbes = new long[churns];
            Map<String, Long> beforeChurns = ThreadCpu.byGroup();
            for (int c = 0; c < churns; c++) {
                // A churn comes to a coordinator in its steady state, not in the same millisecond as
                // the convergence before it: as the floor's churn does, it starts once the workers'
                // JVMs are done with that convergence (they were still busy, and the churn's probes
                // took two to three times as long as on a quiet machine). A warm-up's churns only
                // compile their path.
                if (!name.startsWith("warm")) {
                    settle();
                }
                List<String> fresh = churnsIn(spares, c).stream().map(WorkerEndpoint::url).toList();
                Set<WorkerEndpoint> next = Set.copyOf(churned(fleet, spares, c)); // discovery's set, as the floor's list, made before
                long before = resolver.probesSent();
                var probeTimer = registry.get("rollcall.probe.latency").tag("outcome", "answered").timer();
                long answeredBefore = probeTimer.count();
                double probeMsBefore = probeTimer.totalTime(TimeUnit.MILLISECONDS);
                java.time.Instant wall = java.time.Instant.now();
                Map<String, Long> cpuAt = ThreadCpu.byGroup();
                long workersAt = childrenCpu();
                long churnStart = System.nanoTime();
                discovery.push(next);
                resolver.await(s -> s.counts().compatible() == n && s.counts().candidates() == n
                        && fresh.stream().allMatch(url -> compatible(s, url)), TIMEOUT);
                churnNanos[c] = System.nanoTime() - churnStart;
                churnProbes[c] = resolver.probesSent() - before;
                long answered = probeTimer.count() - answeredBefore;
                Timeline.mark(wall, String.format(Locale.ROOT, "rollcall %s churn %d of %d: %d answered, mean probe %.1f ms; %s",
                        name, c, n, answered, (probeTimer.totalTime(TimeUnit.MILLISECONDS) - probeMsBefore)
                                / Math.max(1, answered), ThreadCpu.compact(cpuAt, childrenCpu() - workersAt)), churnNanos[c]);
            }
            ConvergenceRun run = new ConvergenceRun(nanos, percentile(latency, 0.5), percentile(latency, 0.99), probes, churnNanos,
                    churnProbes, cpu, threadCpu, snapshots, serverCpu, kernel, (long) latency.total(TimeUnit.NANOSECONDS));
            System.out.println(run.detail("rollcall " + name));
            if (churns > 0) {
                // The churns' own share, settle() and its full GCs included: whole reps of slow churns follow some
                // convergences (the history's seventeenth round), and this says what else ran meanwhile.
                System.out.println("      its churns, settle() included: threads (ms) " + ThreadCpu.since(beforeChurns));
            }
            return run;
        }
    }

    /** A new baseline converges on {@code fleet} (a pass, then another every period until all answered), then the churn. */
    static ConvergenceRun baseline(List<WorkerEndpoint> fleet, List<WorkerEndpoint> spares) throws Exception {
        int n = fleet.size();
        PushDiscovery discovery = new PushDiscovery("push[benchmark]");
        try (HandRolledResolver baseline = new HandRolledResolver(discovery::urls, VERSION)) {
            Map<String, Long> threadsBefore = ThreadCpu.byGroup();
            KernelCounters.Snapshot kernelBefore = KernelCounters.now();
            long cpuBefore = processCpu();
            long serverBefore = childrenCpu();
            long start = System.nanoTime();
            discovery.push(fleet);
            List<Long> at = new ArrayList<>();
            List<Integer> seen = new ArrayList<>();
            passUntil(baseline, n, start, at, seen);
            long nanos = System.nanoTime() - start;
            chartCurve(n, "baseline (polls every " + PERIOD.toSeconds() + " s)", Charts.seconds(at), Charts.doubles(seen));
            long cpu = processCpu() - cpuBefore;
            long serverCpu = childrenCpu() - serverBefore;
            long[] kernel = KernelCounters.since(kernelBefore);
            Map<String, Long> threadCpu = ThreadCpu.since(threadsBefore);
            long p50 = baseline.latencies().percentile(50);
            long p99 = baseline.latencies().percentile(99);
            long probeNanos = baseline.latencies().sum();
            long probes = baseline.probesSent();
            int churns = spares.isEmpty() ? 0 : Plan.CHURNS;
            long[] churnNanos = new long[churns];
            long[] churnProbes = new long[churns];
            for (int c = 0; c < churns; c++) {
                settle(); // as for Rollcall's churn
                Set<WorkerEndpoint> next = Set.copyOf(churned(fleet, spares, c));
                long before = baseline.probesSent();
                long churnStart = System.nanoTime();
                discovery.push(next);
                passUntil(baseline, n, churnStart, new ArrayList<>(), new ArrayList<>());
                churnNanos[c] = System.nanoTime() - churnStart;
                churnProbes[c] = baseline.probesSent() - before;
            }
            ConvergenceRun run = new ConvergenceRun(nanos, p50, p99, probes, churnNanos, churnProbes, cpu, threadCpu, 0, serverCpu, kernel,
                    probeNanos);
            System.out.println(run.detail("baseline " + n));
            return run;
        }
    }

    /** Passes of the baseline's loop, one per period as its scheduler would run them, until it sees {@code n}. */
    private static void passUntil(HandRolledResolver baseline, int n, long start, List<Long> at, List<Integer> seen)
            throws InterruptedException {
        long end = System.nanoTime() + TIMEOUT.toNanos();
        baseline.pass();
        at.add(System.nanoTime() - start);
        seen.add(baseline.workers().size());
        while (baseline.workers().size() != n) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("baseline saw " + baseline.workers().size() + " of " + n
                        + " workers after " + TIMEOUT);
            }
            Thread.sleep(PERIOD.toMillis());
            baseline.pass();
            at.add(System.nanoTime() - start);
            seen.add(baseline.workers().size());
        }
    }

    /** The chart of convergence on {@code n} fresh workers: the last measured run of each side. */
    static void chartCurve(int n, String series, double[] seconds, double[] workers) {
        if (n != Plan.SMALL && n != Plan.LARGE) {
            return;
        }
        Charts.curve("convergence-" + n, "Converging on " + Charts.count(n) + " fresh workers (last run of each)",
                "workers usable", series, seconds, workers);
    }

    /** {@link PlainGrpcFloor#converge}, with its detail line in the log and its p99 kept for the report. */
    private static long floorLogged(List<WorkerEndpoint> fleet, PlainGrpcFloor.Call call) throws InterruptedException {
        java.time.Instant wall = java.time.Instant.now();
        ConvergenceRun run = floor(fleet, call);
        Timeline.mark(wall, "floor " + call + " converged on " + fleet.size(), run.nanos());
        FLOOR_P99.computeIfAbsent(call + " " + fleet.size(), n -> new ArrayList<>()).add(run.p99());
        FLOOR_RUNS.computeIfAbsent(call + " " + fleet.size(), n -> new ArrayList<>()).add(run);
        System.out.println(run.detail((call == PlainGrpcFloor.Call.STREAM ? "floor-stream "
                : call == PlainGrpcFloor.Call.UNARY_CLOSED ? "floor-closed " : "floor ") + fleet.size()));
        return run.nanos();
    }

    /**
     * {@link PlainGrpcFloor} as a {@link ConvergenceRun}: its CPU (this JVM's and the workers' JVMs') read at
     * the last answer, before it closes its channels, and its probes' p50 / p99.
     */
    private static ConvergenceRun floor(List<WorkerEndpoint> fleet, PlainGrpcFloor.Call call) throws InterruptedException {
        fleet = inDiscoveryOrder(fleet);
        Map<String, Long> threadsBefore = ThreadCpu.byGroup();
        KernelCounters.Snapshot kernelBefore = KernelCounters.now();
        long cpuBefore = processCpu();
        long serverBefore = childrenCpu();
        long[] atAnswer = new long[6];
        Latencies latencies = new Latencies();
        long[] answers = new long[fleet.size()];
        long nanos = PlainGrpcFloor.converge(fleet, call, atAnswer, latencies, kernelBefore, answers);
        if (call == PlainGrpcFloor.Call.UNARY) {
            java.util.Arrays.sort(answers);
            int step = Math.max(1, answers.length / 500);
            List<Long> at = new ArrayList<>();
            List<Integer> count = new ArrayList<>();
            for (int i = step - 1; i < answers.length; i += step) {
                at.add(answers[i]);
                count.add(i + 1);
            }
            chartCurve(fleet.size(), "plain grpc-java (the floor)", Charts.seconds(at), Charts.doubles(count));
        }
        long[] kernel = java.util.Arrays.copyOfRange(atAnswer, 2, 6);
        return new ConvergenceRun(nanos, latencies.percentile(50), latencies.percentile(99), fleet.size(), new long[0], new long[0],
                atAnswer[0] - cpuBefore, ThreadCpu.since(threadsBefore, PlainGrpcFloor.groupsAtAnswer), 0,
                atAnswer[1] - serverBefore, kernel,
                latencies.sum());
    }

    /**
     * {@code fleet} in the order Rollcall and the baseline are handed it, and probe it in: the order of
     * the set {@link PushDiscovery#push} delivers, read back from one (a {@code Set.copyOf}, an order
     * of its own). The floor probes in that order too. In the list's order it probed the workers one
     * server JVM after another, while the others spread their probes over all of them; on two cores
     * that alone cost the workers' JVMs a third more CPU and twice the context switches (the same
     * floor, both orders, one after the other).
     */
    static List<WorkerEndpoint> inDiscoveryOrder(List<WorkerEndpoint> fleet) {
        try (PushDiscovery discovery = new PushDiscovery("order")) {
            discovery.push(fleet);
            return List.copyOf(discovery.latest());
        }
    }

    /** CPU time of this process so far (all threads: also the JIT compiler and the garbage collector). */
    static long processCpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** CPU time of this process's child processes (the workers' JVMs) so far. */
    static long childrenCpu() {
        return ProcessHandle.current().children()
                .mapToLong(p -> p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L)).sum();
    }

    /**
     * The fleet after churn {@code c} (from 0) of {@value Plan#CHURNS}: each churn replaces the next
     * 1 % of {@code fleet} (its first workers first) with the next 1 % of {@code spares}.
     */
    static List<WorkerEndpoint> churned(List<WorkerEndpoint> fleet, List<WorkerEndpoint> spares, int c) {
        int k = spares.size() / Plan.CHURNS;
        return churned(fleet, spares.subList(0, (c + 1) * k));
    }

    /** The spares that join in churn {@code c} (from 0): the workers it must probe. */
    static List<WorkerEndpoint> churnsIn(List<WorkerEndpoint> spares, int c) {
        int k = spares.size() / Plan.CHURNS;
        return spares.subList(c * k, (c + 1) * k);
    }

    /**
     * The floor's churns while it holds {@code fleet}'s streams open ({@link PlainGrpcFloor.Call#STREAM_LIVE}),
     * as Rollcall holds them with kept channels: each churn opens its newcomers' streams the same way.
     */
    private static List<Long> heldFloorChurns(List<WorkerEndpoint> fleet, List<WorkerEndpoint> spares)
            throws InterruptedException {
        List<Long> churns = new ArrayList<>();
        PlainGrpcFloor.converge(inDiscoveryOrder(fleet), PlainGrpcFloor.Call.STREAM_LIVE, null, null, null, null,
                () -> churns.addAll(floorChurns(fleet.size(), spares, PlainGrpcFloor.Call.STREAM_LIVE)));
        return churns;
    }

    /**
     * The floor of each churn: plain grpc-java probing only the workers that churn brings, on
     * workers that are not still closing the connections of what ran before.
     */
    private static List<Long> floorChurns(int fleetSize, List<WorkerEndpoint> spares) throws InterruptedException {
        return floorChurns(fleetSize, spares, PlainGrpcFloor.Call.UNARY);
    }

    /** As above, making {@code call}: the stream is what Rollcall's probe is when it keeps the channel. */
    private static List<Long> floorChurns(int fleetSize, List<WorkerEndpoint> spares, PlainGrpcFloor.Call call)
            throws InterruptedException {
        long[] nanos = new long[Plan.CHURNS];
        for (int c = 0; c < Plan.CHURNS; c++) {
            settle();
            List<WorkerEndpoint> order = inDiscoveryOrder(churnsIn(spares, c));
            java.time.Instant wall = java.time.Instant.now();
            Map<String, Long> cpuAt = ThreadCpu.byGroup();
            long workersAt = childrenCpu();
            long[] atAnswer = new long[6];
            nanos[c] = PlainGrpcFloor.converge(order, call, atAnswer, null, null);
            // Read at its last answer, while its event loop's threads were alive.
            Timeline.mark(wall, "floor " + call + " churn " + c + " of " + fleetSize + "; "
                    + ThreadCpu.compact(cpuAt, PlainGrpcFloor.groupsAtAnswer, atAnswer[1] - workersAt), nanos[c]);
        }
        System.out.println("    floor churns of " + fleetSize + (call == PlainGrpcFloor.Call.UNARY ? "" : " (" + call + ")")
                + ": " + ConvergenceRun.millis(nanos) + " ms");
        return java.util.Arrays.stream(nanos).boxed().toList();
    }

    /** {@code fleet} without its first {@code spares.size()} workers, plus the spares. */
    static List<WorkerEndpoint> churned(List<WorkerEndpoint> fleet, List<WorkerEndpoint> spares) {
        List<WorkerEndpoint> churned = new ArrayList<>(fleet.subList(spares.size(), fleet.size()));
        churned.addAll(spares);
        return churned;
    }

    static boolean compatible(FleetSnapshot s, String url) {
        return s.status(url).map(st -> st.state() == WorkerStatus.State.COMPATIBLE).orElse(false);
    }

    /** {@code h}'s percentile {@code p} (one of {@link #PERCENTILES}'s), in nanoseconds. */
    static long percentile(HistogramSnapshot h, double p) {
        for (ValueAtPercentile v : h.percentileValues()) {
            if (v.percentile() == p) {
                return (long) v.value(TimeUnit.NANOSECONDS);
            }
        }
        throw new IllegalStateException("no percentile " + p + " in " + h);
    }


    /** Runs one side's first convergence on the URLs in {@code urls} in a new JVM; its time in nanoseconds. */
    private static long fresh(String side, Path urls, Path logs) {
        try (ChildJvm jvm = ChildJvm.start("fresh-" + side, List.of("-Xmx1g"), Bench.class,
                List.of("--child", "fresh", side, urls.toString()), logs.resolve("fresh-" + side + ".log"))) {
            return Long.parseLong(jvm.awaitLine("RESULT "));
        }
    }

    /**
     * In the child JVM: converge {@code times} times in a row (each with a new resolver) and print
     * {@code RESULT <nanos>} of the first. With more than one, a profiling aid:
     * {@code java -XX:StartFlightRecording=... -cp ... Bench --child fresh rollcall urls.txt 5}.
     */
    static void freshChild(String side, Path urlsFile, int times) throws Exception {
        List<WorkerEndpoint> fleet = Files.readAllLines(urlsFile).stream().map(WorkerEndpoint::parse).toList();
        for (int i = 0; i < times; i++) {
            ConvergenceRun run = switch (side) {
                case "rollcall" -> rollcall("fresh-" + i, fleet, List.of());
                case "baseline" -> baseline(fleet, List.of());
                case "floor-stream" -> floor(fleet, PlainGrpcFloor.Call.STREAM);
                default -> floor(fleet, PlainGrpcFloor.Call.UNARY);
            };
            if (times > 1) {
                System.err.printf(Locale.ROOT, "  process CPU %.0f ms (%.2f ms per probe), %d snapshots; threads (ms): %s%n",
                        run.cpuNanos() / 1e6, run.cpuNanos() / 1e6 / run.probes(), run.snapshots(), run.threadCpu());
            }
            if (i == 0) {
                System.out.println("RESULT " + run.nanos());
            }
            System.err.printf(Locale.ROOT, "%s: %d workers in %.3f s, probe p50 %.1f ms, p99 %.1f ms, %d probes%n",
                    side, fleet.size(), run.nanos() / 1e9, run.p50() / 1e6, run.p99() / 1e6, run.probes());
        }
    }
}

