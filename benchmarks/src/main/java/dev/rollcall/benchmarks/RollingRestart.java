package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.testkit.PushDiscovery;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Scenario 7, second part: a rolling restart of 10 workers (each step: start a new one, wait until
 * it is used, retire an old one) while a job runs every 20 ms, each on a freshly taken worker list:
 * one Arrow Flight {@code DoGet} per worker, a job failing when any of them does. Three ways to
 * retire: Rollcall with {@code drain()} first (wait until the resolver has left the worker out,
 * then take it out of discovery and close it); Rollcall without (out of discovery and closed at
 * once); and the hand-written loop polling every second (out of discovery and closed at once).
 */
final class RollingRestart {

    private static final int WORKERS = 10;
    private static final Duration WAIT = Duration.ofSeconds(30);

    private enum Mode { DRAIN, CLOSE_AT_ONCE, HAND_LOOP }

    /** Jobs run and failed. */
    record Tally(int jobs, int failed, long[] drainToStop) {
    }

    private RollingRestart() {
    }

    static void run(Plan plan, Report report) throws Exception {
        Tally drain = restart(Mode.DRAIN);
        Tally closing = restart(Mode.CLOSE_AT_ONCE);
        Tally hand = restart(Mode.HAND_LOOP);
        String title = "Rolling restart of " + WORKERS + " workers, a Flight job every 20 ms: failed jobs";
        Charts.bar("rolling-restart-failed", title, "failed jobs", "failed jobs",
                "Rollcall, drain() (" + drain.failed() + " of " + drain.jobs() + ")", drain.failed());
        Charts.bar("rolling-restart-failed", title, "failed jobs", "failed jobs",
                "Rollcall, closed without drain() (" + closing.failed() + " of " + closing.jobs() + ")", closing.failed());
        Charts.bar("rolling-restart-failed", title, "failed jobs", "failed jobs",
                "baseline polling every 1 s, closed at once (" + hand.failed() + " of " + hand.jobs() + ")", hand.failed());
        for (int i = 0; i < drain.drainToStop().length; i++) {
            Charts.bar("rolling-restart-drain-to-stop", "Rolling restart: drain() → close() returned, each worker in"
                    + " restart order (drain-quiet 500 ms)", "seconds", "drain() → stopped", String.valueOf(i + 1),
                    drain.drainToStop()[i] / 1e9);
        }
        report.add(new Report.Row("7. rolling restart of " + WORKERS + " workers, a Flight job every 20 ms: failed jobs",
                drain.failed() + " of " + drain.jobs(), hand.failed() + " of " + hand.jobs(), "—", "0",
                Report.met(drain.failed() == 0)));
        report.note("Rolling restart (7): each step starts a worker, waits until it is used, then retires one;"
                + " a job fans out one DoGet to every worker of a freshly taken list at once (5 ms of work each)."
                + " Rollcall: drain(), then out of discovery and close() once the resolver left the worker out (close()"
                + " waits until neither a call started nor the drain was announced for drain-quiet, 500 ms). Baseline: the hand-written loop polling"
                + " every 1 s, the worker taken out of discovery and closed at once, close() finishing only the calls"
                + " in flight (drain-quiet 0, as before drain existed). Rollcall resolving, the worker closed that same"
                + " way without drain(): " + closing.failed() + " of " + closing.jobs() + " jobs failed.");
    }

    private static Tally restart(Mode mode) throws Exception {
        try (BufferAllocator allocator = new RootAllocator();
             Clients clients = new Clients(allocator)) {
            List<RollcallWorker> fleet = new CopyOnWriteArrayList<>();
            Duration quiet = mode == Mode.DRAIN ? Duration.ofMillis(500) : Duration.ZERO;
            for (int i = 0; i < WORKERS; i++) {
                fleet.add(start(allocator, quiet));
            }
            PushDiscovery discovery = new PushDiscovery();
            List<String> listed = new CopyOnWriteArrayList<>();
            Runnable publish = () -> {
                List<WorkerEndpoint> now = fleet.stream().map(RollcallWorker::endpoint).toList();
                listed.clear();
                now.forEach(e -> listed.add(e.url()));
                discovery.push(now);
            };
            publish.run();
            WorkerResolver resolver = null;
            HandRolledResolver hand = null;
            Supplier<List<String>> used;
            if (mode == Mode.HAND_LOOP) {
                hand = new HandRolledResolver(() -> List.copyOf(listed), "1.0.0").start(Duration.ofSeconds(1));
                used = hand::workers;
            } else {
                resolver = WorkerResolver.builder().name("bench-restart-" + mode).discovery(discovery)
                        .policy(VersionPolicy.rule(w -> Verdict.accept())).fetchSchemas(false).build();
                WorkerResolver r = resolver;
                used = () -> r.pin().compatibleEndpoints().stream().map(WorkerEndpoint::url).toList();
            }
            try {
                await(() -> used.get().size() == WORKERS);
                AtomicInteger jobs = new AtomicInteger();
                AtomicInteger failed = new AtomicInteger();
                java.util.concurrent.ScheduledExecutorService loop = java.util.concurrent.Executors
                        .newSingleThreadScheduledExecutor(r -> {
                            Thread t = new Thread(r, "bench-restart-jobs");
                            t.setDaemon(true);
                            return t;
                        });
                loop.scheduleWithFixedDelay(() -> {
                    jobs.incrementAndGet();
                    if (!clients.job(used.get())) {
                        failed.incrementAndGet();
                    }
                }, 0, 20, TimeUnit.MILLISECONDS);
                long[] drainToStop = new long[mode == Mode.DRAIN ? WORKERS : 0];
                for (int i = 0; i < WORKERS; i++) {
                    RollcallWorker old = fleet.get(0);
                    long drained = System.nanoTime();
                    RollcallWorker fresh = start(allocator, quiet);
                    fleet.add(fresh);
                    publish.run();
                    await(() -> used.get().contains(fresh.endpoint().url()));
                    if (mode == Mode.DRAIN) {
                        old.drain();
                        String url = old.endpoint().url();
                        await(() -> !used.get().contains(url));
                    }
                    fleet.remove(old);
                    publish.run();
                    clients.retired.add(old.endpoint().url());
                    old.close();
                    if (mode == Mode.DRAIN) {
                        drainToStop[i] = System.nanoTime() - drained;
                    }
                }
                loop.shutdown();
                if (!loop.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the job loop did not stop in " + WAIT);
                }
                if (clients.firstFailure != null) {
                    System.out.println("  " + mode + ": first failed call: " + clients.firstFailure);
                }
                return new Tally(jobs.get(), failed.get(), drainToStop);
            } finally {
                if (resolver != null) {
                    resolver.close();
                }
                if (hand != null) {
                    hand.close();
                }
                fleet.forEach(RollcallWorker::close);
            }
        }
    }

    /** Rollcall's resolver and the hand-written loop share no signal to wait on: poll the condition. */
    private static void await(java.util.concurrent.Callable<Boolean> done) {
        org.awaitility.Awaitility.await("a rolling-restart step").atMost(WAIT).pollInterval(Duration.ofMillis(2))
                .until(done);
    }

    /** {@code quiet} zero: close() as before drain existed (in-flight calls finish, nothing more). */
    static RollcallWorker start(BufferAllocator allocator, Duration quiet) throws Exception {
        return RollcallWorker.builder().version("1.0.0").shutdownGrace(Duration.ofSeconds(5)).drainQuiet(quiet)
                .flightProducer(new TenRows(allocator, TimeUnit.MILLISECONDS.toNanos(5))).start();
    }

    /** One Flight client per worker URL, reused across jobs; a failed one is dropped. */
    static final class Clients implements AutoCloseable {
        private final BufferAllocator allocator;
        private final Map<String, FlightClient> byUrl = new ConcurrentHashMap<>();
        volatile String firstFailure;
        final java.util.Set<String> retired = ConcurrentHashMap.newKeySet();

        Clients(BufferAllocator allocator) {
            this.allocator = allocator;
        }

        private final java.util.concurrent.ExecutorService fanOut = java.util.concurrent.Executors.newFixedThreadPool(
                WORKERS + 2, r -> {
                    Thread t = new Thread(r, "bench-restart-fan-out");
                    t.setDaemon(true);
                    return t;
                });

        /** One DoGet per worker, all at once as a query fans out; whether all of them succeeded. */
        boolean job(List<String> urls) {
            List<java.util.concurrent.Future<Boolean>> calls = new ArrayList<>();
            for (String url : new ArrayList<>(urls)) {
                calls.add(fanOut.submit(() -> call(url)));
            }
            boolean ok = true;
            for (java.util.concurrent.Future<Boolean> f : calls) {
                try {
                    ok &= f.get();
                } catch (Exception e) {
                    ok = false;
                }
            }
            return ok;
        }

        private boolean call(String url) {
            WorkerEndpoint e = WorkerEndpoint.parse(url);
            FlightClient c = byUrl.computeIfAbsent(url, u -> FlightClient.builder(allocator,
                    Location.forGrpcInsecure(e.host(), e.port())).build());
            try (FlightStream stream = c.getStream(new Ticket(new byte[] {1}),
                    org.apache.arrow.flight.CallOptions.timeout(5, TimeUnit.SECONDS))) {
                while (stream.next()) {
                    stream.getRoot().getRowCount();
                }
                return true;
            } catch (Exception failed) {
                if (firstFailure == null) {
                    String kind = retired.contains(url) ? "retired" : "listed";
                    firstFailure = url + " (" + kind + "): " + failed
                            + (failed.getCause() == null ? "" : " <- " + failed.getCause());
                }
                closeQuietly(byUrl.remove(url));
                return false;
            }
        }

        @Override
        public void close() {
            fanOut.shutdownNow();
            byUrl.values().forEach(Clients::closeQuietly);
        }

        private static void closeQuietly(FlightClient c) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // closing a client of a worker that is gone
                }
            }
        }
    }
}
