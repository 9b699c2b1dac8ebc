package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Scenario 7, third part (issue 37): the rolling restart of {@link #workers()} workers with three
 * coordinators, each running a Flight job every 20 ms under a {@link SnapshotLease}, once with exact
 * drain ({@code rollcall.drain.exact=true}) and once with the worker's {@code drain-quiet} rule
 * (500 ms), side by side in one run: failed jobs, drain() → close() returned (median, p99), the
 * last lease that listed the worker closing → close() returned, the wall time. Then a coordinator
 * that holds a lease is killed with SIGKILL mid-drain: drain() → close() and SIGKILL → close().
 * Sizes: {@code -Drollcall.bench.exact-drain.workers} (default 10) and
 * {@code -Drollcall.bench.exact-drain.kills} (default 5) for smoke runs.
 */
final class ExactDrainRestart {

    private static final int COORDINATORS = 3;
    private static final Duration QUIET = Duration.ofMillis(500);
    private static final Duration WAIT = Duration.ofSeconds(30);

    record Tally(int jobs, int failed, Latencies drainToClose, Latencies leaseToClose, long wallNanos) {
    }

    private ExactDrainRestart() {
    }

    static int workers() {
        return Integer.getInteger("rollcall.bench.exact-drain.workers", 10);
    }

    static void run(Plan plan, Report report) throws Exception {
        Tally exact = restart(true);
        Tally quiet = restart(false);
        Latencies killed = new Latencies();
        Latencies killedDrain = new Latencies();
        for (int i = 0; i < Integer.getInteger("rollcall.bench.exact-drain.kills", 5); i++) {
            killed(killed, killedDrain);
        }
        String what = "7. exact drain, rolling restart of " + workers() + " workers, " + COORDINATORS
                + " coordinators leasing a Flight job every 20 ms: ";
        report.add(new Report.Row(what + "failed jobs", exact.failed() + " of " + exact.jobs(),
                quiet.failed() + " of " + quiet.jobs(), "—", "0", Report.met(exact.failed() == 0
                        && exact.failed() <= quiet.failed())));
        report.add(new Report.Row(what + "drain() → close() median / p99",
                Report.duration(exact.drainToClose().percentile(50)) + " / "
                        + Report.duration(exact.drainToClose().percentile(99)),
                Report.duration(quiet.drainToClose().percentile(50)) + " / "
                        + Report.duration(quiet.drainToClose().percentile(99)),
                Report.lessIsBetter(exact.drainToClose().percentile(99), quiet.drainToClose().percentile(99)),
                "last release + ≤ 10 ms p99", "see below"));
        report.add(new Report.Row(what + "could stop → close() returned, median / p99",
                Report.duration(exact.leaseToClose().percentile(50)) + " / "
                        + Report.duration(exact.leaseToClose().percentile(99)),
                Report.duration(quiet.leaseToClose().percentile(50)) + " / "
                        + Report.duration(quiet.leaseToClose().percentile(99)),
                "—", "≤ 10 ms p99", Report.met(exact.leaseToClose().percentile(99) <= TimeUnit.MILLISECONDS.toNanos(10))));
        report.add(new Report.Row(what + "wall time", Report.duration(exact.wallNanos()),
                Report.duration(quiet.wallNanos()), Report.lessIsBetter(exact.wallNanos(), quiet.wallNanos()),
                "exact ahead", Report.met(exact.wallNanos() < quiet.wallNanos())));
        report.add(new Report.Row("7. exact drain, a coordinator holding a lease killed (SIGKILL) mid-drain:"
                + " SIGKILL → close() median / p99 (drain() → close())",
                Report.duration(killed.percentile(50)) + " / " + Report.duration(killed.percentile(99))
                        + " (" + Report.duration(killedDrain.percentile(50)) + ")",
                "shutdown-grace (5 s)", "—", "≪ grace", Report.met(killed.percentile(99) < TimeUnit.SECONDS.toNanos(1))));
        report.note("Exact drain (7): both modes run the same steps (start a worker, wait until all three coordinators"
                + " use it, drain() an old one, wait until all three left it out, take it out of discovery, close()),"
                + " every job under a lease; 'quiet' is drain.exact=false with drain-quiet 500 ms. 'Could stop'"
                + " is the later of the end of the last lease whose snapshot listed the worker and the call of its"
                + " close() (each step first waits until all three coordinators left the worker out); the row is"
                + " then what close() takes beyond what it must wait for: the releases, the calls in flight, the"
                + " server's shutdown. Exact runs first, quiet second, in one JVM.");
    }

    private static Tally restart(boolean exact) throws Exception {
        int n = workers();
        try (BufferAllocator allocator = new RootAllocator();
             RollingRestart.Clients clients = new RollingRestart.Clients(allocator)) {
            List<RollcallWorker> fleet = new CopyOnWriteArrayList<>();
            for (int i = 0; i < n; i++) {
                fleet.add(RollingRestart.start(allocator, QUIET));
            }
            List<PushDiscovery> discoveries = new ArrayList<>();
            List<WorkerResolver> coordinators = new ArrayList<>();
            Runnable publish = () -> discoveries.forEach(d -> d.push(fleet.stream().map(RollcallWorker::endpoint).toList()));
            for (int c = 0; c < COORDINATORS; c++) {
                PushDiscovery d = new PushDiscovery();
                discoveries.add(d);
                coordinators.add(WorkerResolver.builder().name("bench-exact-" + exact + "-" + c).discovery(d)
                        .policy(VersionPolicy.rule(w -> Verdict.accept())).fetchSchemas(false).exactDrain(exact).build());
            }
            publish.run();
            Map<String, Long> lastLeaseEnd = new ConcurrentHashMap<>();
            AtomicInteger jobs = new AtomicInteger();
            AtomicInteger failed = new AtomicInteger();
            ScheduledExecutorService loops = Executors.newScheduledThreadPool(COORDINATORS, r -> {
                Thread t = new Thread(r, "bench-exact-jobs");
                t.setDaemon(true);
                return t;
            });
            try {
                for (WorkerResolver r : coordinators) {
                    r.awaitWorkers(n, WAIT);
                    loops.scheduleWithFixedDelay(() -> {
                        jobs.incrementAndGet();
                        List<String> urls;
                        boolean ok;
                        try (SnapshotLease lease = r.lease()) {
                            urls = lease.snapshot().workers().stream().map(WorkerInfo::endpoint)
                                    .map(WorkerEndpoint::url).toList();
                            ok = clients.job(urls);
                        }
                        long now = System.nanoTime();
                        urls.forEach(u -> lastLeaseEnd.put(u, now));
                        if (!ok) {
                            failed.incrementAndGet();
                        }
                    }, 0, 20, TimeUnit.MILLISECONDS);
                }
                Latencies drainToClose = new Latencies();
                Latencies leaseToClose = new Latencies();
                long start = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    RollcallWorker old = fleet.get(0);
                    RollcallWorker fresh = RollingRestart.start(allocator, QUIET);
                    fleet.add(fresh);
                    publish.run();
                    for (WorkerResolver r : coordinators) {
                        r.await(s -> s.status(fresh.endpoint().url()).flatMap(st -> st.info()).isPresent()
                                && s.compatibleEndpoints().contains(fresh.endpoint()), WAIT);
                    }
                    String url = old.endpoint().url();
                    long drained = System.nanoTime();
                    old.drain();
                    for (WorkerResolver r : coordinators) {
                        r.await(s -> !s.compatibleEndpoints().contains(old.endpoint()), WAIT);
                    }
                    fleet.remove(old);
                    publish.run();
                    clients.retired.add(url);
                    long closeCalled = System.nanoTime();
                    old.close();
                    long closed = System.nanoTime();
                    drainToClose.add(closed - drained);
                    // From the moment the worker could stop: the later of the last lease that listed it
                    // closing and close() being called (the step waits for three coordinators first).
                    Long leaseEnd = lastLeaseEnd.get(url);
                    leaseToClose.add(Math.max(0, closed - Math.max(closeCalled, leaseEnd == null ? 0 : leaseEnd)));
                }
                long wall = System.nanoTime() - start;
                loops.shutdown();
                if (!loops.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the job loops did not stop in " + WAIT);
                }
                if (clients.firstFailure != null) {
                    System.out.println("  exact=" + exact + ": first failed call: " + clients.firstFailure);
                }
                return new Tally(jobs.get(), failed.get(), drainToClose, leaseToClose, wall);
            } finally {
                loops.shutdownNow();
                coordinators.forEach(WorkerResolver::close);
                fleet.forEach(RollcallWorker::close);
            }
        }
    }

    /** One worker, one coordinator in a child JVM holding a lease on it; drained, then the child is killed. */
    private static void killed(Latencies sigkillToClose, Latencies drainToClose) throws Exception {
        {
            RollcallWorker worker = RollcallWorker.builder().version("1.0.0").shutdownGrace(Duration.ofSeconds(5))
                    .drainQuiet(QUIET).start();
            Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), LeaseHolderMain.class.getName(),
                    String.valueOf(worker.port())).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                        StandardCharsets.UTF_8));
                String line = out.readLine();
                if (line == null || !line.startsWith("leased")) {
                    throw new IllegalStateException("the coordinator did not take its lease: " + line);
                }
                org.awaitility.Awaitility.await("the child holds the worker").atMost(WAIT)
                        .pollInterval(Duration.ofMillis(2)).until(() -> worker.coordinatorsHolding() == 1);
                long drained = System.nanoTime();
                worker.drain();
                var closed = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    worker.close();
                    return System.nanoTime();
                }, Bench.onThread("exact-drain-close"));
                long killedAt = System.nanoTime();
                child.destroyForcibly();
                long returned = closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                sigkillToClose.add(returned - killedAt);
                drainToClose.add(returned - drained);
            } finally {
                child.destroyForcibly();
                worker.close();
            }
        }
    }
}
