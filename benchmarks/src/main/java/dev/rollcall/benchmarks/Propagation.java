package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.etcd.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Scenario 4, propagation: from an etcd {@code put} to the reader's state. A real etcd on loopback
 * (testkit's {@link EtcdServer}); Rollcall's resolver watches the prefix
 * ({@code rollcall.discovery.type=etcd}); the baseline polls the prefix every 5 s (a {@code get} with
 * jetcd, as a user's loop would) and probes what it has not seen. One writer puts a new worker's URL
 * (a real, live worker) every 10 ms; each put is timed from just before it is sent to (a) the first
 * state that lists the worker (Rollcall: a snapshot in which it has a status; baseline: a poll that
 * returned it) and (b) the first state in which a reader gets it from {@code workers()}.
 */
final class Propagation {

    private static final String PREFIX = "/rollcall-bench/workers/";
    private static final String PREFIX_BASELINE = "/rollcall-bench/baseline-workers/";
    private static final long PACE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private Propagation() {
    }

    /** Put times and arrival times of each write, per side and stage; 0 = not yet. */
    private static final class Clocks {
        final long[] put;
        final long[] watched;
        final long[] rListed;
        final long[] rUsable;
        final long[] bListed;
        final long[] bUsable;
        final Map<String, Integer> rWaitingList = new ConcurrentHashMap<>();
        final Map<String, Integer> rWaitingUse = new ConcurrentHashMap<>();
        final Map<String, Integer> bWaitingList = new ConcurrentHashMap<>();
        final Map<String, Integer> bWaitingUse = new ConcurrentHashMap<>();

        Clocks(int n) {
            put = new long[n];
            watched = new long[n];
            rListed = new long[n];
            rUsable = new long[n];
            bListed = new long[n];
            bUsable = new long[n];
        }

        /** Put {@code i} names {@code url}: the side of this phase waits for it. */
        void expect(String url, int i, boolean rollcallSide) {
            if (rollcallSide) {
                rWaitingList.put(url, i);
                rWaitingUse.put(url, i);
            } else {
                bWaitingList.put(url, i);
                bWaitingUse.put(url, i);
            }
        }

        /** On Rollcall's listener thread. */
        void snapshot(FleetSnapshot s) {
            long now = System.nanoTime();
            rWaitingList.entrySet().removeIf(e -> s.status(e.getKey()).isPresent() && stamp(rListed, e.getValue(), now));
            rWaitingUse.entrySet().removeIf(e -> Convergence.compatible(s, e.getKey())
                    && stamp(rUsable, e.getValue(), now));
        }

        /** On the baseline's loop thread, after its poll returned {@code urls}. */
        void polled(List<String> urls) {
            long now = System.nanoTime();
            Set<String> seen = new HashSet<>(urls);
            bWaitingList.entrySet().removeIf(e -> seen.contains(e.getKey()) && stamp(bListed, e.getValue(), now));
        }

        /** On the baseline's loop thread, after a pass. */
        void passed(List<String> workers) {
            long now = System.nanoTime();
            Set<String> usable = new HashSet<>(workers);
            bWaitingUse.entrySet().removeIf(e -> usable.contains(e.getKey()) && stamp(bUsable, e.getValue(), now));
        }

        boolean done() {
            return rWaitingList.isEmpty() && rWaitingUse.isEmpty() && bWaitingList.isEmpty() && bWaitingUse.isEmpty();
        }

        private static boolean stamp(long[] at, int i, long now) {
            at[i] = now;
            return true;
        }
    }

    static void run(Plan plan, List<WorkerEndpoint> all, Report report) throws Exception {
        int total = plan.writesWarmUp() + plan.writes();
        warmUp(all.subList(0, total));
        Clocks rollcall;
        Clocks baseline;
        try (EtcdServer etcd = EtcdServer.start();
             Client client = Client.builder().endpoints(etcd.endpoint()).build()) {
            // One side at a time, each beside its own bare watch: the baseline's pass probes every URL it has
            // not seen at once (some 500 every 5 s, unbounded), and in the same JVM that storm of threads
            // delayed every thread hop of Rollcall's path by up to 350 ms, a condition no coordinator has.
            rollcall = phase(etcd, client, PREFIX, true, all, total, plan.writesWarmUp());
            baseline = phase(etcd, client, PREFIX_BASELINE, false, all, total, plan.writesWarmUp());
        }
        int from = plan.writesWarmUp();
        long[] rl = since(rollcall.put, rollcall.rListed, from);
        long[] ru = since(rollcall.put, rollcall.rUsable, from);
        long[] bl = since(baseline.put, baseline.bListed, from);
        long[] bu = since(baseline.put, baseline.bUsable, from);
        String n = String.format("%,d", plan.writes());
        report.add(row("4. etcd put → snapshot listing the worker, median of " + n, rl, bl, 50, "—", null));
        report.add(row("4. etcd put → snapshot listing the worker, p99 of " + n, rl, bl, 99, "≤ 50 ms", 50e6));
        long[] watch = since(rollcall.put, rollcall.watched, from);
        long[] watchB = since(baseline.put, baseline.watched, from);
        String title = "etcd put → snapshot listing the worker (" + n + " puts)";
        Charts.distribution("etcd-propagation", title, "Rollcall", rl);
        Charts.distribution("etcd-propagation", title, "baseline (polls every 5 s)", bl);
        Charts.distribution("etcd-propagation", title, "bare etcd watch (the floor)", watch);
        long watch50 = Latencies.percentile(watch, 50);
        long watch99 = Latencies.percentile(watch, 99);
        long r50 = Latencies.percentile(rl, 50);
        long r99 = Latencies.percentile(rl, 99);
        report.add(new Report.Row("4. … listing against a bare etcd watch of the prefix (the floor: median / p99)",
                "×" + ratio(r50, watch50) + " / ×" + ratio(r99, watch99) + " the floor",
                "×" + ratio(Latencies.percentile(bl, 50), Latencies.percentile(watchB, 50)) + " / ×"
                        + ratio(Latencies.percentile(bl, 99), Latencies.percentile(watchB, 99)) + " the floor",
                "floor " + Report.duration(watch50) + " / " + Report.duration(watch99), "≤ ×1.25",
                Report.met(r50 <= 1.25 * watch50 && r99 <= 1.25 * watch99)));
        report.add(row("4. etcd put → worker in workers() (probed), median of " + n, ru, bu, 50, "—", null));
        report.add(row("4. etcd put → worker in workers() (probed), p99 of " + n, ru, bu, 99, "≤ 25 ms", 25e6));
        report.note("Propagation (4): one put every 10 ms of a new key whose value is a live worker's URL; the"
                + " baseline polls every 5 s, so its figures are about half a period and a whole period. The floor"
                + " row is the time from the same puts to their events on a plain jetcd watch of the prefix in the"
                + " same JVM (etcd's commit with fsync, then its watch delivery): no watcher sees a write sooner."
                + " Rollcall's puts, then the baseline's (another prefix, the same workers), each beside its own bare"
                + " watch: the baseline's passes (every URL it has not seen probed at once) made a storm of threads"
                + " that held up every thread hop in the JVM. Before the puts, untimed convergences on the same workers"
                + " (plain gRPC, then Rollcall) warm this JVM's probe path and the workers' JVMs: run alone, the"
                + " scenario measured their first calls.");
    }

    /**
     * Untimed convergences on the workers the puts will name (plain gRPC's unary call, then Rollcall's
     * stream), until two of Rollcall's are within 15 % of each other (at most five). Run alone
     * ({@code --only 4}) the scenario otherwise met workers' JVMs, and a probe path in this one, that had
     * never served a call: on a slow machine (2026-12-05 23:46) the first puts waited 1.5 s to be probed,
     * the first measured ones still 0.4–0.8 s, and the {@code workers()} p99 came out at 0.6–0.9 s
     * against 13–17 ms in full runs, where scenario 2 has warmed the same workers first.
     */
    private static void warmUp(List<WorkerEndpoint> workers) throws Exception {
        int[] round = {0};
        List<Long> rounds = Convergence.untilSteady(5, () -> {
            PlainGrpcFloor.converge(workers);
            return Convergence.rollcall("warm-propagation-" + round[0]++, workers, List.of()).nanos();
        });
        System.out.println("propagation: warmed up by " + rounds.size() + " convergences on " + workers.size()
                + " workers (Rollcall's times): " + rounds.stream().map(Report::duration).toList());
    }

    /** One side's puts, beside a bare watch of the prefix; returns their clocks. */
    private static Clocks phase(EtcdServer etcd, Client client, String prefix, boolean rollcallSide,
                                List<WorkerEndpoint> all, int total, int warmUp) throws Exception {
        Clocks clocks = new Clocks(total);
        WorkerResolver resolver = null;
        HandRolledResolver baseline = null;
        Watch.Watcher floorWatch = null;
        try {
            if (rollcallSide) {
                resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                        "rollcall.discovery.type", "etcd",
                        "rollcall.discovery.etcd.endpoints", etcd.endpoint(),
                        "rollcall.discovery.etcd.prefix", prefix,
                        "rollcall.policy.type", "semver",
                        "rollcall.policy.semver.range", "^1.0.0")));
                resolver.await(s -> s.number() > 0, Convergence.TIMEOUT); // the first read of the prefix is done
                resolver.addListener(clocks::snapshot);
            } else {
                baseline = new HandRolledResolver(() -> poll(client.getKVClient(), prefix, clocks), Convergence.VERSION);
            }
            // etcd's own delivery, as any watcher of the prefix gets it: the floor of "listed".
            floorWatch = client.getWatchClient().watch(bytes(prefix),
                    WatchOption.builder().isPrefix(true).build(), Watch.listener(response -> {
                        long now = System.nanoTime();
                        for (WatchEvent e : response.getEvents()) {
                            String key = e.getKeyValue().getKey().toString(StandardCharsets.UTF_8);
                            int i = Integer.parseInt(key.substring(prefix.length() + 1));
                            if (clocks.watched[i] == 0) {
                                clocks.watched[i] = now;
                            }
                        }
                    }));
            if (baseline != null) {
                baseline.onPass(clocks::passed).start(Convergence.PERIOD);
            }
            KV kv = client.getKVClient();
            System.out.println("propagation (" + (rollcallSide ? "Rollcall" : "baseline") + "): " + total
                    + " puts, one every 10 ms (" + warmUp + " not counted)");
            long start = System.nanoTime();
            for (int i = 0; i < total; i++) {
                LockSupport.parkNanos(start + i * PACE_NANOS - System.nanoTime());
                String url = all.get(i).url();
                clocks.expect(url, i, rollcallSide);
                clocks.put[i] = System.nanoTime();
                kv.put(bytes(prefix + "w" + i), bytes(url)).get(10, TimeUnit.SECONDS);
            }
            long end = System.nanoTime() + Convergence.TIMEOUT.toNanos();
            while (!clocks.done() && System.nanoTime() < end) {
                Thread.sleep(100);
            }
            if (!clocks.done()) {
                throw new IllegalStateException("writes still unseen after " + Convergence.TIMEOUT + ": Rollcall "
                        + clocks.rWaitingUse.size() + ", baseline " + clocks.bWaitingUse.size());
            }
            return clocks;
        } finally {
            if (floorWatch != null) {
                floorWatch.close();
            }
            if (resolver != null) {
                resolver.close();
            }
            if (baseline != null) {
                baseline.close();
            }
        }
    }

    private static Report.Row row(String scenario, long[] r, long[] b, double p, String target, Double limit) {
        long rv = Latencies.percentile(r, p);
        long bv = Latencies.percentile(b, p);
        return new Report.Row(scenario, Report.duration(rv), Report.duration(bv), Report.lessIsBetter(rv, bv),
                target, limit == null ? "—" : Report.met(rv <= limit));
    }

    private static String ratio(long a, long b) {
        return String.format(java.util.Locale.ROOT, "%.2f", (double) a / Math.max(1, b));
    }

    static long[] since(long[] from, long[] to, int first) {
        long[] d = new long[from.length - first];
        for (int i = first; i < from.length; i++) {
            d[i - first] = to[i] - from[i];
        }
        return d;
    }

    /** The baseline's discovery: read the prefix, values are worker URLs. */
    private static List<String> poll(KV kv, String prefix, Clocks clocks) {
        try {
            List<String> urls = kv.get(bytes(prefix), GetOption.builder().isPrefix(true).build())
                    .get(5, TimeUnit.SECONDS).getKvs().stream()
                    .map(KeyValue::getValue).map(v -> v.toString(StandardCharsets.UTF_8)).toList();
            clocks.polled(urls);
            return urls;
        } catch (Exception e) {
            throw new IllegalStateException("baseline: cannot read " + prefix + " from etcd", e);
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
