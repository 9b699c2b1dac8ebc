package dev.rollcall.cli;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.local.UnresponsiveWorker;
import dev.rollcall.local.WorkerFleet;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code rollcall demo}: Rollcall's whole story on one machine, in a few seconds.
 *
 * <ol>
 *   <li>Starts a local fleet: workers on 1.4.0, 1.4.0, 1.5.1 and 2.0.0, and one that accepts
 *       connections but never answers.</li>
 *   <li>Writes a {@code rollcall.properties} as a user would: static discovery from a watched file,
 *       the {@code semver} policy {@code ^1.4.0}, a 1 s probe timeout.</li>
 *   <li>Waits until every candidate has a verdict and prints them: compatible, rejected (2.0.0),
 *       unreachable (the hung one).</li>
 *   <li>Pins one snapshot and runs a small job (a sum of squares) over Arrow Flight on its
 *       compatible workers only, checking that each answer comes from the version the snapshot
 *       planned on.</li>
 *   <li>Upgrades the 1.x workers to 1.6.0 one at a time by editing the workers file, and runs the
 *       job again after each step. The 2.0.0 worker never takes part.</li>
 *   <li>Upgrades a second fleet of five 2.0.0 workers in place to 2.1.0 under the {@code rollout}
 *       policy (quorum 3): the job stays on 2.0.0 until 2.1.0 has three workers, then switches once;
 *       no snapshot ever mixes the two.</li>
 * </ol>
 *
 * <p>Exit code 0 when every check held, 1 otherwise (with one line on stderr saying what failed).
 * Everything it starts (workers, resolver, Flight clients, threads, temporary files) is gone when
 * it returns.
 */
@Command(name = "demo",
        mixinStandardHelpOptions = true,
        versionProvider = RollcallCommand.Version.class,
        description = {
            "Starts a local fleet of workers on mixed versions, lets Rollcall pick the compatible ones,"
                    + " runs a small job over Arrow Flight on them, then does a rolling upgrade and runs"
                    + " the job after each step.",
            "Needs nothing but loopback ports; finishes in a few seconds."
        })
public final class DemoCommand implements Callable<Integer> {

    static final String RANGE = "^1.4.0";
    static final String UPGRADE_TO = "1.6.0";
    static final long ROWS = 1_000_000;

    static final String ROLLOUT_FROM = "2.0.0";
    static final String ROLLOUT_TO = "2.1.0";
    static final int ROLLOUT_WORKERS = 5;
    static final int ROLLOUT_QUORUM = 3;

    /** Versions of the initial fleet, in start order. */
    private static final List<String> VERSIONS = List.of("1.4.0", "1.4.0", "1.5.1", "2.0.0");
    /** Which workers the rolling upgrade replaces: the 1.x line below the new release. */
    /** The configured range, checked again on the data the job got back, independently of the resolver. */
    private static final SemverRangePolicy ALLOWED = SemverRangePolicy.of(RANGE);
    private static final SemverRangePolicy BELOW_UPGRADE = SemverRangePolicy.of(">=1.0.0 <" + UPGRADE_TO);
    /** Each wait for the resolver to see a change; far above what it needs (well under a second). */
    private static final Duration WAIT = Duration.ofSeconds(15);

    @Spec
    private CommandSpec spec;

    @Mixin
    private LoggingOptions logging;

    /** Where the fleet is discovered from. */
    enum Discovery { STATIC, ETCD }

    @Option(names = "--discovery", paramLabel = "static|etcd", defaultValue = "static",
            converter = DiscoveryConverter.class,
            description = "Discover the fleet from a watched file (static, the default) or from a real etcd the demo"
                    + " starts on loopback, each worker registered under a lease (etcd; needs Debian's etcd-server)")
    private Discovery discovery = Discovery.STATIC;

    /** Lower-case names, and an error that lists them. */
    static final class DiscoveryConverter implements picocli.CommandLine.ITypeConverter<Discovery> {
        @Override
        public Discovery convert(String value) {
            try {
                return Discovery.valueOf(value.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException("'" + value + "' is not static or etcd");
            }
        }
    }

    /** For picocli. */
    public DemoCommand() {
    }

    @Override
    public Integer call() {
        logging.apply();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        long started = System.nanoTime();
        try {
            run(out);
            out.printf(Locale.ROOT, "%n== Done in %.1f s ==%n", (System.nanoTime() - started) / 1e9);
            return 0;
        } catch (DemoFailure e) {
            fail(out, err, e.getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(out, err, "interrupted", null);
        } catch (Exception e) {
            // Not a check that failed but something that broke (a port, a file, a bug): keep the trace.
            fail(out, err, e.toString(), e);
        } finally {
            out.flush();
            err.flush();
        }
        return 1;
    }

    private void fail(PrintWriter out, PrintWriter err, String message, Throwable cause) {
        out.flush();
        err.println("rollcall demo FAILED: " + message);
        if (cause != null) {
            if (logging.verbose) {
                cause.printStackTrace(err);
            } else {
                err.println("(run with --verbose for the stack trace and Rollcall's logs)");
            }
        }
    }

    private void run(PrintWriter out) throws Exception {
        out.println("Rollcall demo: a coordinator finds its workers and uses only those whose version it can mix.");
        try (RootAllocator allocator = new RootAllocator();
             Producers producers = new Producers(allocator);
             WorkerFleet fleet = WorkerFleet.withFlightProducers(producers::create);
             ScratchDirectory dir = ScratchDirectory.create();
             Candidates workers = discovery == Discovery.ETCD ? EtcdCandidates.start()
                     : new FileCandidates(dir.path().resolve("workers.txt"));
             SquaresJob job = new SquaresJob(allocator.newChildAllocator("flight-clients", 0, Long.MAX_VALUE), 4)) {

            heading(out, "1. A local fleet");
            for (String v : VERSIONS) {
                fleet.addWorker(v);
            }
            UnresponsiveWorker hung = fleet.addUnresponsive();
            out.println("Started " + VERSIONS.size() + " workers (WorkerInfo and Arrow Flight on one port each)"
                    + " and one that accepts connections but never answers:");
            for (FleetWorker w : fleet.workers()) {
                out.println("  " + w.endpoint().url() + "  " + w.version());
            }
            out.println("  " + hung.endpoint().url() + "  (hung)");

            heading(out, "2. Configuration, as a user writes it");
            for (FleetWorker w : fleet.workers()) {
                workers.add(w.endpoint(), w.version());
            }
            workers.add(hung.endpoint(), "");
            Path properties = dir.path().resolve("rollcall.properties");
            Files.writeString(properties, properties(workers), StandardCharsets.UTF_8);
            printFile(out, properties);
            workers.print(out);

            try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.fromFile(properties))) {
                heading(out, "3. What the resolver found");
                long t0 = System.nanoTime();
                int candidates = fleet.endpoints().size();
                FleetSnapshot found = awaitFleet(resolver,
                        s -> s.counts().candidates() == candidates && s.counts().pending() == 0,
                        "a verdict on each of the " + candidates + " candidates");
                out.printf(Locale.ROOT, "Every candidate has a verdict in snapshot %d, %.1f s after start-up"
                        + " (the hung worker costs one probe timeout).%n", found.number(), (System.nanoTime() - t0) / 1e9);
                FleetTable.print(out, found);
                // Whatever is not compatible now (the 2.0.0 and the hung worker) must stay out of every job.
                Set<String> outsiders = found.statuses().stream()
                        .filter(s -> s.state() != State.COMPATIBLE)
                        .map(s -> s.endpoint().url())
                        .collect(Collectors.toUnmodifiableSet());

                heading(out, "4. A job on the compatible workers only");
                FleetSnapshot pinned = resolver.pin();
                out.println("Pinned snapshot " + pinned.number() + "; [0, " + ROWS + ") in "
                        + pinned.workers().size() + " partitions, one per compatible worker, fetched over Arrow Flight:");
                SquaresJob.Result first = job.run(pinned, ROWS);
                for (SquaresJob.Part p : first.parts()) {
                    String range = "[" + p.partition().from() + ", " + p.partition().to() + ")";
                    out.printf(Locale.ROOT, "  %s  %-6s %-18s rows %-7d sum %-19d (%d ms)%n",
                            p.partition().worker().endpoint().url(), p.version(), range, p.rows(), p.sum(),
                            p.took().toMillis());
                }
                check(first, outsiders);
                out.println(first.summary());
                int jobs = 1;

                heading(out, "5. Rolling upgrade to " + UPGRADE_TO + ", one worker at a time");
                List<FleetWorker> old = fleet.workers().stream()
                        .filter(w -> BELOW_UPGRADE.check(WorkerInfo.of(w.endpoint(), w.version())).accepted())
                        .toList();
                out.println("Every 1.x version here is inside " + RANGE + ", so the policy lets them share a job;"
                        + " 2.0.0 is not, so it must never join one.");
                out.println("Each step: start a " + UPGRADE_TO + " worker, add it to " + workers.where()
                        + ", wait until it is compatible; drain the old one (it says so over its WatchWorkerInfo"
                        + " stream and leaves new snapshots at once), take it out, stop it; run the job on a"
                        + " freshly pinned snapshot. Meanwhile a small job runs every 20 ms on a fresh snapshot.");
                BackgroundJobs background = new BackgroundJobs(resolver, job);
                for (int i = 0; i < old.size(); i++) {
                    FleetWorker retiring = old.get(i);
                    String oldUrl = retiring.endpoint().url();
                    FleetWorker fresh = fleet.addWorker(UPGRADE_TO);
                    String newUrl = fresh.endpoint().url();
                    workers.add(fresh.endpoint(), UPGRADE_TO);
                    FleetSnapshot in = awaitFleet(resolver, s -> state(s, newUrl) == State.COMPATIBLE,
                            newUrl + " (" + UPGRADE_TO + ") to become compatible");
                    // Drained before it goes: no new snapshot offers it, while queries that pinned one
                    // before finish on it; then out of discovery, then stopped.
                    retiring.drain();
                    FleetSnapshot drained = awaitFleet(resolver, s -> state(s, oldUrl) == State.DRAINING,
                            oldUrl + " (" + retiring.version() + ") to drain");
                    workers.remove(retiring.endpoint());
                    FleetSnapshot gone = awaitFleet(resolver, s -> s.status(oldUrl).isEmpty(),
                            oldUrl + " (" + retiring.version() + ") to leave the snapshot");
                    retiring.stop();
                    SquaresJob.Result r = job.run(resolver.pin(), ROWS);
                    check(r, outsiders);
                    jobs++;
                    out.println("step " + (i + 1) + "/" + old.size() + ": " + newUrl + " (" + UPGRADE_TO
                            + ") compatible in snapshot " + in.number() + "; " + oldUrl + " (" + retiring.version()
                            + ") drained in snapshot " + drained.number() + ", gone in snapshot " + gone.number()
                            + ", stopped");
                    out.println("  " + r.summary());
                }
                BackgroundJobs.Tally tally = background.stop();
                out.println(tally.ran() + " small jobs ran on freshly pinned snapshots during the upgrade, "
                        + tally.failed() + " failed" + (tally.failed() == 0 ? "" : ": " + tally.firstFailure()));

                heading(out, "6. The fleet after the upgrade");
                FleetSnapshot last = awaitFleet(resolver, s -> s.counts().pending() == 0, "no pending candidate");
                FleetTable.print(out, last);
                out.println("The " + outsiders.size() + " workers that were never compatible ("
                        + String.join(", ", outsiders.stream().sorted().toList()) + ") took part in none of the "
                        + jobs + " jobs: no job mixed versions the policy calls incompatible, and each job used"
                        + " only the workers its own snapshot called compatible.");
            }

            rollout(out, fleet, dir, job);
        }
    }

    /**
     * Part 7: a second fleet upgraded in place under the {@code rollout} policy. The job runs on one
     * cohort at a time: the old one until the new one has its quorum, then the new one; every
     * snapshot in between is watched, not just the sampled ones.
     */
    private static void rollout(PrintWriter out, WorkerFleet fleet, ScratchDirectory dir, SquaresJob job)
            throws Exception {
        heading(out, "7. Rolling upgrade " + ROLLOUT_FROM + " -> " + ROLLOUT_TO + " under the rollout policy");
        List<FleetWorker> cohort = new ArrayList<>();
        for (int i = 0; i < ROLLOUT_WORKERS; i++) {
            cohort.add(fleet.addWorker(ROLLOUT_FROM));
        }
        WorkersFile file = new WorkersFile(dir.path().resolve("rollout-workers.txt"));
        file.write(cohort.stream().map(w -> w.endpoint().url()).toList());
        Path properties = dir.path().resolve("rollout.properties");
        Files.writeString(properties, String.join("\n",
                "# The rollout policy: among ^2.0.0, the newest version with a quorum, never two at once.",
                "rollcall.discovery.type=static",
                "rollcall.discovery.static.file=" + file.path().toAbsolutePath().toString().replace("\\", "\\\\"),
                "rollcall.policy.type=rollout",
                "rollcall.policy.rollout.range=^2.0.0",
                "rollcall.policy.rollout.min-workers=" + ROLLOUT_QUORUM,
                ""), StandardCharsets.UTF_8);
        out.println("Started " + ROLLOUT_WORKERS + " more workers on " + ROLLOUT_FROM + ", listed in "
                + file.path().getFileName() + "; a second resolver reads:");
        printFile(out, properties);
        try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.fromFile(properties))) {
            List<String> mixed = new CopyOnWriteArrayList<>();
            List<String> cohorts = new CopyOnWriteArrayList<>();
            resolver.addListener(s -> {
                Set<String> versions = s.workers().stream().map(WorkerInfo::version).collect(Collectors.toSet());
                if (versions.size() > 1) {
                    mixed.add("snapshot " + s.number() + " " + versions);
                }
                s.selection().cohort().ifPresent(c -> {
                    if (cohorts.isEmpty() || !cohorts.get(cohorts.size() - 1).equals(c)) {
                        cohorts.add(c);
                    }
                });
            });
            FleetSnapshot ready = awaitFleet(resolver, s -> s.counts().compatible() == ROLLOUT_WORKERS,
                    "the " + ROLLOUT_WORKERS + " " + ROLLOUT_FROM + " workers to be compatible");
            out.println("snapshot " + ready.number() + ": " + ready.selection().summary());
            out.println("Each step restarts one worker in place (same port) on " + ROLLOUT_TO
                    + ", waits until the resolver has seen it, and runs the job on a freshly pinned snapshot:");
            for (int i = 0; i < cohort.size(); i++) {
                FleetWorker w = cohort.get(i);
                String url = w.endpoint().url();
                w.restart(ROLLOUT_TO);
                FleetSnapshot seen = awaitFleet(resolver, s -> s.version(url).equals(java.util.Optional.of(ROLLOUT_TO))
                                && s.counts().pending() == 0 && s.counts().unreachable() == 0,
                        url + " to report " + ROLLOUT_TO);
                SquaresJob.Result r = job.run(resolver.pin(), ROWS);
                if (!r.correct()) {
                    throw new DemoFailure("wrong result: " + r.summary());
                }
                Set<String> used = r.parts().stream().map(SquaresJob.Part::version).collect(Collectors.toSet());
                if (used.size() != 1) {
                    throw new DemoFailure("the job on snapshot " + r.snapshot() + " mixed versions " + used);
                }
                out.printf(Locale.ROOT, "step %d/%d: %s x%d, %s x%d -> job on %s (%d workers), sum correct%n",
                        i + 1, cohort.size(), ROLLOUT_TO, i + 1, ROLLOUT_FROM, cohort.size() - i - 1,
                        used.iterator().next(), r.parts().size());
                out.println("  snapshot " + seen.number() + ": " + seen.selection().summary());
            }
            if (!mixed.isEmpty()) {
                throw new DemoFailure("snapshots mixed versions under the rollout policy: " + mixed);
            }
            if (!cohorts.equals(List.of(ROLLOUT_FROM, ROLLOUT_TO))) {
                throw new DemoFailure("expected one switch " + ROLLOUT_FROM + " -> " + ROLLOUT_TO + ", saw " + cohorts);
            }
            out.println("Every snapshot used one version; the cohort switched once, when " + ROLLOUT_TO + " had "
                    + ROLLOUT_QUORUM + " workers: " + String.join(" -> ", cohorts) + ".");
        }
    }

    /** The checks that make this a demo of safety, not just of plumbing. */
    private static void check(SquaresJob.Result result, Set<String> outsiders) {
        if (!result.correct()) {
            throw new DemoFailure("wrong result: " + result.summary());
        }
        for (SquaresJob.Part p : result.parts()) {
            String url = p.partition().worker().endpoint().url();
            if (outsiders.contains(url)) {
                throw new DemoFailure(url + " (version " + p.version() + ") took part in the job on snapshot "
                        + result.snapshot() + ", but it was never compatible");
            }
            // Independent of the resolver: the version the data came from must satisfy the range.
            Verdict verdict = ALLOWED.check(WorkerInfo.of(p.partition().worker().endpoint(), p.version()));
            if (!verdict.accepted()) {
                throw new DemoFailure("the job on snapshot " + result.snapshot() + " used " + url + ": "
                        + verdict.reason());
            }
        }
    }

    private static State state(FleetSnapshot s, String url) {
        return s.status(url).map(WorkerStatus::state).orElse(null);
    }

    private static FleetSnapshot awaitFleet(WorkerResolver resolver, Predicate<FleetSnapshot> done, String what)
            throws InterruptedException {
        try {
            return resolver.await(done, WAIT);
        } catch (TimeoutException e) {
            FleetSnapshot s = resolver.pin();
            throw new DemoFailure("waited " + WAIT.toSeconds() + " s for " + what + "; last "
                    + FleetTable.summary(s) + "; statuses " + s.statuses());
        }
    }

    private static String properties(Candidates workers) {
        List<String> lines = new ArrayList<>();
        lines.add("# Written by `rollcall demo`, as a coordinator would configure Rollcall.");
        lines.addAll(workers.discoveryProperties());
        return String.join("\n", lines) + "\n" + String.join("\n",
                "rollcall.policy.type=semver",
                "rollcall.policy.semver.range=" + RANGE,
                "# Declare the hung worker unreachable after 1 s (default 2s).",
                "rollcall.probe.timeout=1s",
                "");
    }

    private static void printFile(PrintWriter out, Path file) throws IOException {
        out.println(file + ":");
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            out.println("  " + line);
        }
    }

    private static void heading(PrintWriter out, String title) {
        out.println();
        out.println("== " + title + " ==");
    }

    /**
     * Creates each worker's {@link PartitionProducer} (the fleet calls it on every worker start) and
     * closes their allocators once the fleet has stopped.
     */
    private static final class Producers implements AutoCloseable {
        private final BufferAllocator parent;
        private final List<PartitionProducer> created = new CopyOnWriteArrayList<>();
        private final AtomicInteger count = new AtomicInteger();

        Producers(BufferAllocator parent) {
            this.parent = parent;
        }

        PartitionProducer create(String version) {
            PartitionProducer p = new PartitionProducer(version,
                    parent.newChildAllocator("worker-" + count.incrementAndGet() + "-" + version, 0, Long.MAX_VALUE));
            created.add(p);
            return p;
        }

        @Override
        public void close() {
            RuntimeException first = null;
            for (PartitionProducer p : created) {
                try {
                    p.close();
                } catch (RuntimeException e) {
                    if (first == null) {
                        first = e;
                    } else {
                        first.addSuppressed(e);
                    }
                }
            }
            if (first != null) {
                throw first;
            }
        }
    }

    /** A temporary directory for the demo's two files, deleted on close. */
    private record ScratchDirectory(Path path) implements AutoCloseable {

        static ScratchDirectory create() throws IOException {
            return new ScratchDirectory(Files.createTempDirectory("rollcall-demo-"));
        }

        @Override
        public void close() {
            try (Stream<Path> files = Files.list(path)) {
                List<Path> all = new ArrayList<>(files.toList());
                for (Path f : all) {
                    Files.deleteIfExists(f);
                }
                Files.deleteIfExists(path);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot delete the demo's temporary directory " + path, e);
            }
        }
    }
}
