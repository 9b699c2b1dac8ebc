package dev.rollcall.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The benchmark harness: runs every scenario, Rollcall and the hand-written baseline side by side
 * in one run, and prints a Markdown table (scenario | Rollcall | baseline | ratio | target | met).
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar [--quick] [--write-doc] [--only 1,3] [--logs DIR]
 * </pre>
 *
 * <ul>
 *   <li>{@code --quick}: smaller and shorter (under 3 minutes for scenarios 1 to 6); otherwise the full run.</li>
 *   <li>{@code --write-doc}: also writes the table and its charts, without the notes, into
 *       {@code BENCHMARKS.md} (the working directory's), between the markers of this kind of run.</li>
 *   <li>{@code --only}: the scenarios to run (1 read path, 2 convergence, 3 probe economy,
 *       4 propagation, 5 memory and threads, 6 ZooKeeper and DNS propagation, 7 drain, 8 the last mile:
 *       restart in place behind a channel, kill to last call, shared channels; 9 a fleet of 100,000
 *       without kept channels; 10 the faults of a production network: a host cut off, Flight traffic
 *       beside the probes; 11 probe protocols: {@code none} on 9's size, the {@code grpc-health} drain
 *       against the {@code rollcall} one; 12 subsets: the model of 100 coordinators over 10,000 workers
 *       and 8 resolvers over 1,000 loopback workers; 14 the fleet service: publish → seen by 1, 100 and 1,000
 *       {@code WatchFleet} clients, its CPU per delivered snapshot, heap per idle watcher, N coordinators
 *       following one service against N embedding a resolver; 15 the xDS control plane: drain → a
 *       grpc-java xDS channel's calls land only on the rest, against a {@code rollcall:} channel, and the
 *       service's heap per xDS client and per fleet of 10,000 endpoints; 16 capability lookups: a requirement
 *       100 of 10,000 workers meet, by the index against a filter over {@code workers()}, and the cost of
 *       building a snapshot); default 1 to 12, 14, 15 and 16. 13, a study of how a probe's latency
 *       follows the probes in flight (the floor at 24 to 64, Rollcall at 32 and 64), runs only when named.</li>
 * </ul>
 * The table always goes to {@code <logs>/results-<quick|full>.md} too; logs of the child JVMs, JMH
 * and etcd go to {@code --logs} (default {@code benchmarks/target/bench-logs}).
 */
public final class Bench {

    private Bench() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true"); // the charts draw without a display
        if (args.length > 0 && args[0].equals("--child")) {
            child(args);
            return;
        }
        Plan chosen = Plan.FULL;
        boolean writeDoc = false;
        Set<Integer> only = new TreeSet<>(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16));
        Path logDir = Files.isDirectory(Path.of("benchmarks")) ? Path.of("benchmarks", "target", "bench-logs")
                : Path.of("bench-logs");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> chosen = Plan.QUICK;
                case "--write-doc" -> writeDoc = true;
                case "--only" -> {
                    only.clear();
                    for (String s : args[++i].split(",")) {
                        only.add(Integer.parseInt(s.trim()));
                    }
                }
                case "--logs" -> logDir = Path.of(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i]
                            + "; usage: [--quick] [--write-doc] [--only 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16] [--logs DIR]"
                            + " (13, a study of probe concurrency, runs only when named)");
                    System.exit(2);
                }
            }
        }
        Plan plan = chosen;
        Path logs = Files.createDirectories(logDir);
        scenarioLimit = plan.scenarioLimit();
        hangLogs = logs;
        Timeline.start(logs);
        String machine = machine();
        String loadBefore = loadAverage();
        System.out.println("Rollcall benchmarks, " + plan.name() + " run; " + machine + "; load average " + loadBefore);
        long start = System.nanoTime();
        Report report = new Report();

        if (only.contains(1)) {
            scenario(report, "1. read path", () -> ReadPath.run(plan, report, logs));
        }
        if (only.contains(6)) {
            // Needs no worker fleet (it times discovery alone), so it runs before the fleets start.
            scenario(report, "6. ZooKeeper propagation", () -> BackendPropagation.runZooKeeper(plan, report));
            scenario(report, "6. DNS propagation", () -> BackendPropagation.runDns(plan, report));
        }
        if (only.contains(7)) {
            scenario(report, "7. drain", () -> Drain.run(plan, report));
            scenario(report, "7. rolling restart", () -> RollingRestart.run(plan, report));
            if (!Boolean.getBoolean("rollcall.bench.skip-exact-drain")) {
                scenario(report, "7. exact drain", () -> ExactDrainRestart.run(plan, report));
            }
        }
        if (only.contains(8)) {
            // Shared channels counts descriptors and heap in JVMs of their own and the restart counts calls:
            // neither depends on speed, so they share the time; kill to last call times latencies, alone.
            var shared = java.util.concurrent.CompletableFuture.runAsync(
                    () -> scenario(report, "8. shared channels", () -> SharedChannels.run(report, logs)),
                    onThread("8. shared channels"));
            scenario(report, "8. restart in place", () -> RestartInPlace.run(plan, report));
            shared.join();
            scenario(report, "8. kill to last call", () -> KillToLastCall.run(plan, report, logs));
        }
        if (only.contains(10)) {
            // Both time latencies: one after the other, before the big fleets take the machine.
            scenario(report, "10. host cut off", () -> HostCutOff.run(plan, report));
            scenario(report, "10. Flight beside probes", () -> FlightBesideProbes.run(plan, report, logs));
        }
        if (only.contains(11)) {
            // No fleet of its own beyond two loopback servers; before 9 takes the machine's descriptors.
            scenario(report, "11. probe protocols", () -> ProtocolRuns.run(plan, report));
        }
        if (only.contains(12)) {
            // 1,000 loopback servers of its own, closed before 9 and the fleets of 2-5 take the descriptors.
            scenario(report, "12. subsets", () -> Subsets.run(plan, report));
        }
        if (only.contains(13)) {
            // A study, not a target: only when asked for (--only 13); its own fleet of 10,000, before 9 and 2-5.
            scenario(report, "13. probe concurrency", () -> ProbeConcurrency.run(plan, report, logs));
        }
        if (only.contains(14)) {
            // 1,100 loopback workers here and the service and its followers in JVMs of their own; it times
            // latencies and CPU, so alone, and before 9 and the fleets of 2-5 take the machine's descriptors.
            scenario(report, "14. fleet service", () -> FleetService.run(plan, report, logs));
        }
        if (only.contains(15)) {
            // Times drains on 4 loopback workers, so alone; its 10,000 workers are synthetic (no descriptors).
            scenario(report, "15. xDS", () -> XdsControlPlane.run(plan, report, logs));
        }
        if (only.contains(16)) {
            // Pure computation on one thread, timed by its CPU: before the fleets take the machine.
            scenario(report, "16. capability lookups", () -> CapabilityLookups.run(plan, report));
        }
        if (only.contains(9)) {
            // Its own server and coordinator JVMs, before the fleets of 2-5 take their descriptors.
            scenario(report, "9. a fleet of " + BigFleet.size(plan), () -> BigFleet.run(plan, report, logs));
        }
        if (only.stream().anyMatch(s -> s >= 2 && s <= 5)) {
            int servers = Plan.LARGE + Plan.CHURNS * (int) (Plan.LARGE * Plan.CHURN);
            System.out.println("starting " + servers + " workers in separate JVMs");
            long t = System.nanoTime();
            try (ServerFleets fleets = ServerFleets.start(servers, Convergence.VERSION, logs)) {
                System.out.printf(Locale.ROOT, "  %d workers listening after %.1f s%n", fleets.endpoints().size(),
                        (System.nanoTime() - t) / 1e9);
                var all = fleets.endpoints();
                if (only.contains(2)) {
                    scenario(report, "2. convergence", () -> Convergence.run(plan, fleets, report, logs));
                }
                // 5 runs in a JVM of its own and measures nothing that depends on speed; 3 counts probes,
                // which does not either: they share the time. 4 times latencies, so it runs alone.
                var footprint = java.util.concurrent.CompletableFuture.runAsync(() -> {
                    if (only.contains(5)) {
                        scenario(report, "5. memory and threads", () -> Footprint.run(all, report, logs));
                    }
                }, onThread("5. memory and threads"));
                if (only.contains(3)) {
                    scenario(report, "3. probe economy", () -> ProbeEconomy.run(plan, all, report));
                }
                footprint.join();
                if (only.contains(4)) {
                    scenario(report, "4. propagation", () -> Propagation.run(plan, all, report));
                }
            }
        }
        long seconds = Math.round((System.nanoTime() - start) / 1e9);
        String loadAfter = loadAverage();
        // ./benchmark says it started us; otherwise the jar was started by hand.
        String launcher = System.getenv().getOrDefault("ROLLCALL_BENCH_LAUNCHER",
                "java --add-opens=java.base/java.nio=ALL-UNNAMED -jar benchmarks/target/benchmarks.jar");
        String command = launcher + (args.length > 0 ? " " + String.join(" ", args) : "");
        String head = header(plan, command, seconds, machine, loadBefore, loadAfter);
        String section = head + "\n" + report.markdown();
        // The charts go next to the table: into the logs, and with --write-doc beside BENCHMARKS.md.
        String logCharts = Charts.write(logs.resolve("charts-" + plan.name()), logs);
        System.out.println();
        System.out.println(section);
        Files.writeString(logs.resolve("results-" + plan.name() + ".md"), section + logCharts);
        if (writeDoc) {
            String docCharts = Charts.write(Path.of("docs", "benchmarks", "charts", plan.name()), Path.of("."));
            writeDoc(Path.of("BENCHMARKS.md"), plan.name(), docSection(plan.name(), head, report, docCharts));
        }
        System.exit(report.markdown().contains("failed: ") ? 1 : 0);
    }

    private interface Scenario {
        void run() throws Exception;
    }

    /** Set once by {@link #main}: how long one scenario may take before it is reported as hung. */
    private static volatile Duration scenarioLimit = Plan.FULL.scenarioLimit();
    private static volatile Path hangLogs = Path.of(".");

    /**
     * An executor that runs each task on a new daemon thread named {@code name}: for the harness's
     * tasks that block (a scenario beside another, a child JVM's answer). Not the common pool: on two
     * cores it has one thread, and a task queued behind a blocked one waited for it (on Java 25 the
     * shared-channels scenario's second child JVM waited out the 8-minute watchdog).
     */
    static java.util.concurrent.Executor onThread(String name) {
        return task -> {
            Thread t = new Thread(task, name);
            t.setDaemon(true);
            t.start();
        };
    }

    private static void scenario(Report report, String name, Scenario scenario) {
        System.out.println("== " + name);
        long t = System.nanoTime();
        ScenarioWatchdog.Outcome outcome = ScenarioWatchdog.run(name, scenario::run, scenarioLimit, hangLogs);
        if (outcome.failure() != null) {
            outcome.failure().printStackTrace();
            report.failed(name, outcome.failure());
        }
        System.out.printf(Locale.ROOT, "   (%s took %.0f s)%n", name, (System.nanoTime() - t) / 1e9);
    }

    private static void child(String[] args) throws Exception {
        switch (args[1]) {
            case "fresh" -> Convergence.freshChild(args[2], Path.of(args[3]),
                    args.length > 4 ? Integer.parseInt(args[4]) : 1);
            case "footprint" -> Footprint.childMain(Path.of(args[2]));
            case "plain-worker" -> KillToLastCall.childMain(args[2]);
            case "shared-channels" -> SharedChannels.childMain(args[2], Path.of(args[3]));
            default -> throw new IllegalArgumentException("unknown child " + args[1]);
        }
        System.exit(0);
    }

    private static String header(Plan plan, String command, long seconds, String machine, String loadBefore,
                                 String loadAfter) {
        StringBuilder b = new StringBuilder();
        b.append("**").append(plan == Plan.QUICK ? "Quick run" : "Full run").append(", ")
                .append(ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z"))).append("** — `")
                .append(command).append("`, took ").append(seconds / 60).append(" min ").append(seconds % 60)
                .append(" s.\n\n");
        b.append("Machine: ").append(machine).append(". Load average (1, 5, 15 min) ").append(loadBefore)
                .append(" before the run (other work), ").append(loadAfter)
                .append(" after it (this run's own JVMs included).");
        if (first(loadBefore) > 2 || Double.parseDouble(loadBefore.split(",")[1].trim()) > 2) {
            b.append(" **The machine was shared with other work (load above 2 on 2 cores): expect these figures to"
                    + " be slower, and their tails wider, than on a quiet machine.**");
        }
        b.append('\n');
        return b.toString();
    }

    private static double first(String load) {
        try {
            return Double.parseDouble(load.split(",")[0].trim());
        } catch (RuntimeException e) {
            return 0;
        }
    }

    private static String machine() {
        long ram = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getTotalMemorySize();
        return String.format(Locale.ROOT, "%d cores (nproc), %.1f GiB RAM, %s %s (%s), %s %s",
                Runtime.getRuntime().availableProcessors(), ram / 1024.0 / 1024 / 1024,
                System.getProperty("java.vm.name"), System.getProperty("java.runtime.version"),
                System.getProperty("java.vm.vendor"), System.getProperty("os.name"), System.getProperty("os.version"));
    }

    private static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + ", " + parts[1] + ", " + parts[2];
        } catch (IOException | RuntimeException e) {
            return String.format(Locale.ROOT, "%.2f",
                    ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        }
    }

    /**
     * What {@code --write-doc} puts between the markers: the header, the table and the charts. The
     * page keeps only the current table (what each row means is written once beside it); the notes,
     * each scenario's setup and this run's own counts, stay in the logs' results file.
     */
    static String docSection(String kind, String head, Report report, String charts) {
        return head + "\n" + report.table() + "\nThe notes on this run (each scenario's setup and counts) are in"
                + " `results-" + kind + ".md` of its logs directory.\n" + charts;
    }

    /** Replaces the text between {@code <!-- results:kind:begin -->} and {@code <!-- results:kind:end -->}. */
    static void writeDoc(Path doc, String kind, String section) throws IOException {
        String begin = "<!-- results:" + kind + ":begin -->";
        String end = "<!-- results:" + kind + ":end -->";
        String text = Files.exists(doc) ? Files.readString(doc) : "";
        int b = text.indexOf(begin);
        int e = text.indexOf(end);
        List<String> out = new ArrayList<>();
        if (b < 0 || e < b) {
            System.err.println("no " + begin + " ... " + end + " markers in " + doc.toAbsolutePath()
                    + "; the table is in the logs directory only");
            return;
        }
        out.add(text.substring(0, b + begin.length()));
        out.add("\n" + section);
        out.add(text.substring(e));
        Files.writeString(doc, String.join("", out));
        System.out.println("wrote the table into " + doc.toAbsolutePath());
    }
}
