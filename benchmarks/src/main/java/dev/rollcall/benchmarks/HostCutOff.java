package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.faults.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Scenario 10, first part: a worker's host is cut off (packets dropped, no FIN, no RST: the testkit
 * fault proxy's {@code blackhole()} in front of it), and the time until the worker is out of
 * {@code workers()}. 20 workers ({@code RollcallWorker}, in this JVM), each behind a proxy of its
 * own, one resolver with its defaults (whatever they are in this build: the kept connection's
 * keepalive and the stream's heartbeats where the build has them, else the refresh alone). The
 * workers join and the proxies are cut one after the other, at random moments 0 to 500 ms apart,
 * so that the cuts fall at every point of the connections' timers; each trial's clock runs from its cut to the first
 * snapshot without the worker, seen by a snapshot listener. A worker still in after the window is
 * counted as such. The baseline is the last commit's behaviour, refresh only: out at the worker's
 * next {@code probe.refresh-interval} (10 min by default), given, not waited for.
 */
final class HostCutOff {

    private static final int TRIALS = 20;
    private static final Duration WINDOW = Duration.ofSeconds(30);
    /** The last commit's refresh-only resolver notices a silent host at its next refresh: this, at worst. */
    private static final Duration REFRESH = Duration.ofMinutes(10);

    private HostCutOff() {
    }

    static void run(Plan plan, Report report) throws Exception {
        List<RollcallWorker> workers = new ArrayList<>();
        List<FaultProxy> proxies = new ArrayList<>();
        PushDiscovery discovery = new PushDiscovery();
        try {
            for (int i = 0; i < TRIALS; i++) {
                workers.add(RollcallWorker.builder().version("1.0.0").start());
                proxies.add(FaultProxy.to(workers.get(i).endpoint()));
            }
            List<WorkerEndpoint> endpoints = proxies.stream().map(FaultProxy::endpoint).toList();
            long[] took = measure(endpoints, proxies, discovery);
            int stayed = (int) Arrays.stream(took).filter(t -> t < 0).count();
            long[] ranked = Arrays.stream(took).map(t -> t < 0 ? Long.MAX_VALUE : t).toArray(); // still in: last
            long median = stillIn(Latencies.median(ranked));
            long p99 = stillIn(Latencies.percentile(ranked, 99));
            String still = stayed == 0 ? "" : " (" + stayed + " of " + TRIALS + " still in workers() after "
                    + WINDOW.toSeconds() + " s)";
            long refreshMedian = REFRESH.toNanos() / 2;
            report.add(new Report.Row("10. host cut off (no FIN, no RST) → out of workers(), median of " + TRIALS
                    + "; defaults (baseline: the last commit, refresh only)",
                    (median < 0 ? "still in after " + WINDOW.toSeconds() + " s" : Report.duration(median)) + still,
                    "≈ 5 min (a random moment of its 10 min refresh-interval)",
                    median < 0 ? "—" : Report.lessIsBetter(median, refreshMedian), "—", "—"));
            report.add(new Report.Row("10. host cut off → out of workers(), p99 of " + TRIALS + " (the same two)",
                    p99 < 0 ? "still in after " + WINDOW.toSeconds() + " s" : Report.duration(p99),
                    "≈ 10 min (its probe.refresh-interval)",
                    p99 < 0 ? "—" : Report.lessIsBetter(p99, REFRESH.toNanos()), "≤ 10 s",
                    Report.met(p99 >= 0 && p99 <= TimeUnit.SECONDS.toNanos(10))));
            report.note(String.format(Locale.ROOT, "Host cut off (10): %d workers (RollcallWorker) in this JVM, each"
                            + " behind a fault proxy of its own, joining a resolver with its defaults one after the other"
                            + " 0 to 500 ms apart; then the proxies blackholed one after the other, 0 to 500 ms apart (no"
                            + " byte moves, sockets stay open); each time runs"
                            + " from a cut to the first snapshot without that worker, seen by a snapshot listener, for at"
                            + " most %d s after the last cut. Times (ms): %s. The last commit had no keepalive and no"
                            + " liveness on the WatchWorkerInfo stream: a silent host stayed in until the worker's next"
                            + " refresh (probe.refresh-interval, 10 min by default, minus up to 10 %% jitter), not"
                            + " waited for here.", TRIALS, WINDOW.toSeconds(), millis(took)));
        } finally {
            proxies.forEach(FaultProxy::close);
            workers.forEach(RollcallWorker::close);
        }
    }

    /** Each trial's time from its cut to its worker's absence, in nanoseconds; -1 if still there after the window. */
    private static long[] measure(List<WorkerEndpoint> endpoints, List<FaultProxy> proxies, PushDiscovery discovery)
            throws Exception {
        AtomicLongArray cutAt = new AtomicLongArray(TRIALS);
        AtomicLongArray outAt = new AtomicLongArray(TRIALS);
        CountDownLatch allOut = new CountDownLatch(TRIALS);
        try (WorkerResolver resolver = WorkerResolver.builder().name("bench-cut-off").discovery(discovery)
                .policy(VersionPolicy.rule(w -> Verdict.accept())).build()) {
            // The workers join one after the other at random moments too, so that their connections'
            // timers (keepalive pings, the streams' heartbeats) do not all tick in step with each other.
            Random random = new Random(34);
            for (int i = 1; i <= TRIALS; i++) {
                discovery.push(endpoints.subList(0, i));
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(random.nextInt(500)));
            }
            resolver.await(s -> s.counts().compatible() == TRIALS, Duration.ofSeconds(60));
            try (var listening = resolver.addListener(s -> {
                long now = System.nanoTime();
                for (int i = 0; i < TRIALS; i++) {
                    if (cutAt.get(i) != 0 && outAt.get(i) == 0 && !s.compatibleEndpoints().contains(endpoints.get(i))
                            && outAt.compareAndSet(i, 0, now)) {
                        allOut.countDown();
                    }
                }
            })) {
                for (int i = 0; i < TRIALS; i++) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(random.nextInt(500)));
                    cutAt.set(i, System.nanoTime());
                    proxies.get(i).blackhole();
                }
                allOut.await(WINDOW.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        long[] took = new long[TRIALS];
        for (int i = 0; i < TRIALS; i++) {
            took[i] = outAt.get(i) == 0 ? -1 : outAt.get(i) - cutAt.get(i);
        }
        return took;
    }

    private static long stillIn(long nanos) {
        return nanos == Long.MAX_VALUE ? -1 : nanos;
    }

    private static String millis(long[] nanos) {
        StringBuilder b = new StringBuilder();
        for (long n : nanos) {
            b.append(b.length() == 0 ? "" : ", ").append(n < 0 ? "still in" : String.format(Locale.ROOT, "%.0f", n / 1e6));
        }
        return b.toString();
    }
}
