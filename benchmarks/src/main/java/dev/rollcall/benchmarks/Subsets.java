package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.KeyRouting;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.PushDiscovery;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.IntSupplier;

/**
 * Scenario 12, subsets ({@code rollcall.subset.size}): (a) the model, pure computation with the
 * weight the resolver uses ({@link KeyRouting#weight} on the coordinator id): N = 100 coordinators
 * over M = 10,000 workers, K of 16, 64 and 256: connections held (N·K against N·M), how many
 * coordinators hold each worker (min, median, max, standard deviation, how many hold none), and the
 * members a subset changes when 1 % of the fleet is replaced (against K/M of the changes); (b) a real
 * run: 8 resolvers (coordinator ids c0..c7, K = 25) over 1,000 loopback workers in this JVM, the
 * connections the servers count against one resolver without subsets (× 8), and the time to converge.
 */
final class Subsets {

    private static final Duration WAIT = Duration.ofMinutes(3);
    private static final int N = 100;
    private static final int M = 10_000;
    private static final int[] KS = {16, 64, 256};

    private Subsets() {
    }

    /** Runs both; {@code -Drollcall.bench.subsets.workers=N} shrinks the real run for a smoke run. */
    static void run(Plan plan, Report report) throws Exception {
        model(report);
        real(Integer.getInteger("rollcall.bench.subsets.workers", 1_000), 8, 25, report);
    }

    // ---- (a) the model

    private static void model(Report report) {
        List<String> before = urls(0, M);
        List<String> after = new ArrayList<>(before);
        int churn = (int) (M * Plan.CHURN);
        SplittableRandom r = new SplittableRandom(12);
        Set<Integer> replaced = new HashSet<>();
        while (replaced.size() < churn) {
            replaced.add(r.nextInt(M));
        }
        List<String> newcomers = urls(M, churn);
        int n = 0;
        for (int i : replaced) {
            after.set(i, newcomers.get(n++));
        }
        for (int k : KS) {
            Map<String, Integer> holders = new HashMap<>();
            long changed = 0;
            for (int c = 0; c < N; c++) {
                String id = "coordinator-" + c;
                Set<String> was = top(id, before, k);
                Set<String> now = top(id, after, k);
                was.forEach(u -> holders.merge(u, 1, Integer::sum));
                changed += was.stream().filter(u -> !now.contains(u)).count();
            }
            int[] held = before.stream().mapToInt(u -> holders.getOrDefault(u, 0)).sorted().toArray();
            double mean = (double) N * k / M;
            double sd = Math.sqrt(Arrays.stream(held).mapToDouble(x -> (x - mean) * (x - mean)).sum() / M);
            long none = Arrays.stream(held).filter(x -> x == 0).count();
            double perSubset = changed / (double) N;
            double share = perSubset / (2.0 * churn);
            report.add(new Report.Row("12. model K=" + k + ": connections of " + N + " coordinators × "
                    + Report.count(M) + " workers (baseline: without subsets)", Report.count((long) N * k),
                    Report.count((long) N * M), Report.lessIsBetter(N * k, (double) N * M), "N·K",
                    Report.met(true)));
            report.add(new Report.Row("12. model K=" + k + ": coordinators per worker, min / median / max (sd)",
                    String.format(Locale.ROOT, "%d / %d / %d (%.2f); %s hold none", held[0], held[M / 2],
                            held[M - 1], sd, Report.count(none)),
                    String.format(Locale.ROOT, "mean N·K/M = %.2f", mean), "—",
                    String.format(Locale.ROOT, "binomial sd %.2f", Math.sqrt(N * ((double) k / M) * (1 - (double) k / M))),
                    "—"));
            report.add(new Report.Row("12. model K=" + k + ": members changed per subset, 1 % replaced ("
                    + churn + " left, " + churn + " joined)", String.format(Locale.ROOT, "%.2f (%.4f of the changes)",
                    perSubset, share), String.format(Locale.ROOT, "K/M = %.4f", (double) k / M), "—",
                    "≤ K/M of the changes", Report.met(share <= (double) k / M)));
        }
        report.note("Subsets (12a): the model, computed with the resolver's own weight (KeyRouting.weight on the"
                + " coordinator id) for 100 coordinator ids over 10,000 worker URLs; a worker's holders are"
                + " binomial(N, K/M), so at N·K/M near 1 a third of the workers are held by no coordinator."
                + " The churn replaces 1 % of the workers; a subset changes by the members that left plus those a"
                + " newcomer of higher rank pushed out, at most 2·c·K/M in expectation: K/M of the 2·c changes.");
    }

    private static List<String> urls(int from, int count) {
        List<String> urls = new ArrayList<>(count);
        for (int i = from; i < from + count; i++) {
            urls.add("grpc://" + AddressFleetMain.address(i) + ":7000");
        }
        return urls;
    }

    /** The {@code k} URLs of highest weight for {@code id}: the subset the resolver chooses when all are accepted. */
    private static Set<String> top(String id, List<String> urls, int k) {
        PriorityQueue<long[]> heap = new PriorityQueue<>(k + 1, (a, b) -> Long.compareUnsigned(a[0], b[0]));
        for (int i = 0; i < urls.size(); i++) {
            long w = KeyRouting.weight(id, urls.get(i));
            if (heap.size() < k) {
                heap.add(new long[] {w, i});
            } else if (Long.compareUnsigned(w, heap.peek()[0]) > 0) {
                heap.poll();
                heap.add(new long[] {w, i});
            }
        }
        Set<String> top = new HashSet<>(2 * k);
        heap.forEach(e -> top.add(urls.get((int) e[1])));
        return top;
    }

    // ---- (b) a real run

    private static void real(int m, int coordinators, int k, Report report) throws Exception {
        try (LoopbackServers servers = LoopbackServers.start(m, 0, 0, "1.0.0")) {
            List<WorkerEndpoint> endpoints = servers.endpoints();
            VersionPolicy any = VersionPolicy.rule(w -> Verdict.accept());
            // One resolver without subsets holds a connection to every worker; eight would hold 8 × that
            // (twice the descriptors in this one JVM, which holds both ends: too close to the limit).
            long oneTook;
            int oneHeld;
            PushDiscovery alone = new PushDiscovery();
            try (WorkerResolver r = WorkerResolver.builder().name("bench-subsets-off").discovery(alone).policy(any)
                    .fetchSchemas(false).maxCandidates(m).build()) {
                long t0 = System.nanoTime();
                alone.push(endpoints);
                r.awaitWorkers(m, WAIT);
                oneTook = System.nanoTime() - t0;
                oneHeld = settle(servers::openConnections, m);
            }
            settle(servers::openConnections, 0);

            List<PushDiscovery> discoveries = new ArrayList<>();
            List<WorkerResolver> resolvers = new ArrayList<>();
            try {
                for (int c = 0; c < coordinators; c++) {
                    PushDiscovery d = new PushDiscovery();
                    discoveries.add(d);
                    resolvers.add(WorkerResolver.builder().name("bench-subsets-c" + c).discovery(d).policy(any)
                            .fetchSchemas(false).maxCandidates(m).subsetSize(k).coordinatorId("c" + c).build());
                }
                long sentBefore = resolvers.stream().mapToLong(WorkerResolver::probesSent).sum();
                long t0 = System.nanoTime();
                discoveries.forEach(d -> d.push(endpoints));
                for (WorkerResolver r : resolvers) {
                    r.await(s -> s.counts().compatible() == k && s.counts().outsideSubset() == m - k, WAIT);
                }
                long took = System.nanoTime() - t0;
                int held = settle(servers::openConnections, coordinators * k);
                long probes = resolvers.stream().mapToLong(WorkerResolver::probesSent).sum() - sentBefore;
                Map<String, Integer> holders = new HashMap<>();
                resolvers.forEach(r -> r.workers().forEach(w -> holders.merge(w.endpoint().url(), 1, Integer::sum)));
                int most = holders.values().stream().mapToInt(Integer::intValue).max().orElse(0);

                report.add(new Report.Row("12. " + coordinators + " resolvers × " + Report.count(m)
                        + " loopback workers, K=" + k + ": connections the servers count (baseline: one resolver"
                        + " without subsets, × " + coordinators + ")", Report.count(held),
                        Report.count((long) oneHeld * coordinators),
                        Report.lessIsBetter(held, (double) oneHeld * coordinators), "= N·K = " + coordinators * k,
                        Report.met(held == coordinators * k)));
                report.add(new Report.Row("12. " + coordinators + " resolvers, K=" + k + ": until each has its " + k
                        + " (baseline: one resolver without subsets, all " + Report.count(m) + ")",
                        Report.duration(took), Report.duration(oneTook), "—", "—", "—"));
                report.add(new Report.Row("12. " + coordinators + " resolvers, K=" + k + ": probes sent converging;"
                        + " workers used by any; most coordinators on one worker", Report.count(probes) + "; "
                        + Report.count(holders.size()) + "; " + most, "—", "—", "—", "—"));
            } finally {
                for (WorkerResolver r : resolvers) {
                    r.close();
                }
            }
        }
        report.note("Subsets (12b): " + Report.count(m) + " LoopbackServers workers and " + coordinators
                + " resolvers in this JVM (coordinator ids c0..c" + (coordinators - 1) + ", subsetSize " + k
                + "), every worker accepted; the connections are the servers' own count once the"
                + " one-off probe connections of the workers outside each subset are closed. Each resolver still"
                + " probes every worker (the policy decides over the whole fleet): the probes are not subset.");
    }

    /** {@code count}'s value once it reached {@code expected}, or what it is after 30 s (the row shows it either way). */
    private static int settle(IntSupplier count, int expected) {
        try {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                    .until(() -> count.getAsInt() == expected);
        } catch (org.awaitility.core.ConditionTimeoutException notReached) {
            // reported as counted: a row, not a failure
        }
        return count.getAsInt();
    }
}
