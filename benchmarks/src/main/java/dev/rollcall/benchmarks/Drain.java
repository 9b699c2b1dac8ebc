package dev.rollcall.benchmarks;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.core.WorkerProbe;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.testkit.PushDiscovery;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

/**
 * Scenario 7: how long from {@code worker.drain()} until the worker is out of {@code workers()}.
 * Rollcall hears it over the worker's {@code WatchWorkerInfo} stream; the baseline is what Trino's
 * coordinator does, a poll of every worker's state every 5 s (here the unary {@code WorkerInfo}).
 * Two real workers on loopback in this JVM, the worker resumed after each drain; the baseline
 * drains {@value #POLLED_AT_ONCE} workers of its own at the same time (its samples wait for polls,
 * not for a core).
 */
final class Drain {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long POLL_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** Workers the baseline drains at the same time, each polled on its own clock. */
    private static final int POLLED_AT_ONCE = 4;

    private Drain() {
    }

    static void run(Plan plan, Report report) throws Exception {
        boolean quick = plan == Plan.QUICK;
        int drains = quick ? 200 : 1_000;
        int polled = quick ? 4 : 12;
        try (RollcallWorker a = RollcallWorker.builder().version("1.0.0").start();
             RollcallWorker b = RollcallWorker.builder().version("1.0.0").start()) {
            // The baseline's samples wait for polls 5 s apart, a CPU idle: it drains workers of its own,
            // each polled on its own 5 s clock, beside Rollcall's drains (it took 117 s of the full run's
            // 23 min, one worker's 12 drains one after the other, 36 s of the quick run's).
            CompletableFuture<long[]> poll = polled(polled);
            long[] pushed = pushed(a, b, drains);
            long[] baseline = poll.get(WAIT.toSeconds() * polled, TimeUnit.SECONDS);
            Charts.distribution("drain-out", "drain() → out of workers()", "Rollcall (pushed)", pushed);
            Charts.distribution("drain-out", "drain() → out of workers()", "baseline (polls WorkerInfo every 5 s)",
                    baseline);
            long r50 = Latencies.percentile(pushed, 50);
            long r99 = Latencies.percentile(pushed, 99);
            long b50 = Latencies.percentile(baseline, 50);
            long b99 = Latencies.percentile(baseline, 99);
            report.add(new Report.Row("7. drain() → out of workers(), median of " + drains + " (baseline " + polled + ")",
                    Report.duration(r50), Report.duration(b50), Report.lessIsBetter(r50, b50), "—", "—"));
            report.add(new Report.Row("7. drain() → out of workers(), p99 of " + drains + " (baseline " + polled + ")",
                    Report.duration(r99), Report.duration(b99), Report.lessIsBetter(r99, b99), "≤ 10 ms",
                    Report.met(r99 <= TimeUnit.MILLISECONDS.toNanos(10))));
            report.note("Drain (7): drain() on one of two loopback workers, then the time until a resolver's workers()"
                    + " leaves it out; Rollcall hears it over the worker's WatchWorkerInfo stream, no probe. The baseline"
                    + " polls the unary WorkerInfo of every worker every 5 s, as Trino's coordinator polls /v1/info:"
                    + " about half a period on average, a whole one at worst (" + POLLED_AT_ONCE + " workers of its own,"
                    + " drained at the same time as Rollcall's, each at a random moment of its poll's period).");
        }
    }

    private static long[] pushed(RollcallWorker a, RollcallWorker b, int drains) throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        try (WorkerResolver r = WorkerResolver.builder().name("bench-drain").discovery(discovery)
                .policy(VersionPolicy.rule(w -> Verdict.accept())).fetchSchemas(false).build()) {
            discovery.push(List.of(a.endpoint(), b.endpoint()));
            r.awaitWorkers(2, WAIT);
            for (int i = 0; i < 100; i++) { // warm-up
                cycle(a, b, r, discovery);
            }
            long[] out = new long[drains];
            for (int i = 0; i < drains; i++) {
                out[i] = cycle(a, b, r, discovery);
            }
            return out;
        }
    }

    /**
     * One drain of {@code a}, timed until it is out of {@code workers()}; then it is resumed and
     * brought back as a new candidate. Drained and resumed again and again, one worker is a worker
     * that flaps, and the resolver damps it (held out for up to 30 s): leaving discovery and coming
     * back makes it a worker the resolver has no history of, and the next drain waits out the
     * publish spacing ({@link QuietGap}), so that each drain measures a drain in a quiet fleet.
     */
    private static long cycle(RollcallWorker a, RollcallWorker b, WorkerResolver r, PushDiscovery discovery)
            throws Exception {
        WorkerEndpoint gone = a.endpoint();
        long t0 = System.nanoTime();
        a.drain();
        r.await(s -> !s.compatibleEndpoints().contains(gone), WAIT);
        long took = System.nanoTime() - t0;
        a.resume();
        discovery.push(List.of(b.endpoint()));
        r.await(s -> s.counts().candidates() == 1, WAIT);
        discovery.push(List.of(a.endpoint(), b.endpoint()));
        r.await(s -> s.compatibleEndpoints().contains(gone), WAIT);
        QuietGap.await();
        return took;
    }

    /**
     * The hand-written way, {@code drains} times: {@value #POLLED_AT_ONCE} workers of its own, each
     * polled every 5 s on a clock of its own (the last state seen kept) and drained in turn.
     */
    private static CompletableFuture<long[]> polled(int drains) {
        List<CompletableFuture<long[]>> each = new ArrayList<>();
        for (int w = 0; w < POLLED_AT_ONCE; w++) {
            int share = drains / POLLED_AT_ONCE + (w < drains % POLLED_AT_ONCE ? 1 : 0);
            String thread = "drain-baseline-" + w;
            each.add(CompletableFuture.supplyAsync(() -> {
                try (RollcallWorker worker = RollcallWorker.builder().version("1.0.0").start()) {
                    return polled(worker, share);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }, Bench.onThread(thread))); // each ends by itself, within WAIT a drain
        }
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> each.stream()
                .flatMapToLong(f -> LongStream.of(f.join())).toArray());
    }

    /**
     * One worker polled every 5 s, drained {@code drains} times: each time, how long until a poll saw
     * it. Each drain comes at a random moment of a period (a drain right after a poll, as when each
     * waited only for the poll that saw the worker serving again, is the worst case every time).
     */
    private static long[] polled(RollcallWorker a, int drains) throws Exception {
        ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor();
        Object seen = new Object();
        ServingState[] last = {null}; // none before the first poll's answer
        try {
            poller.scheduleAtFixedRate(() -> {
                ProbeOutcome o = WorkerProbe.defaults().probe(a.endpoint(), Duration.ofSeconds(2)).join();
                if (o instanceof ProbeOutcome.Answered answered) {
                    synchronized (seen) {
                        last[0] = answered.state();
                        seen.notifyAll();
                    }
                }
            }, 0, POLL_NANOS, TimeUnit.NANOSECONDS);
            waitFor(seen, last, ServingState.SERVING);
            long[] out = new long[drains];
            for (int i = 0; i < drains; i++) {
                // Just after a poll: the drain at a random moment of the period up to the next.
                TimeUnit.NANOSECONDS.sleep(ThreadLocalRandom.current().nextLong(POLL_NANOS));
                long t0 = System.nanoTime();
                a.drain();
                waitFor(seen, last, ServingState.DRAINING);
                out[i] = System.nanoTime() - t0;
                a.resume();
                waitFor(seen, last, ServingState.SERVING);
            }
            return out;
        } finally {
            poller.shutdownNow();
        }
    }

    private static void waitFor(Object seen, ServingState[] last, ServingState wanted) throws InterruptedException {
        synchronized (seen) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (last[0] != wanted) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("the poll never saw " + wanted);
                }
                TimeUnit.NANOSECONDS.timedWait(seen, left);
            }
        }
    }
}
