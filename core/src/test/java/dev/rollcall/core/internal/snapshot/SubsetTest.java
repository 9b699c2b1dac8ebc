package dev.rollcall.core.internal.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.labels.LabelSelector;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.KeyPaths;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.serial.VirtualTime;
import dev.rollcall.core.internal.settings.LabelSettings;
import dev.rollcall.core.internal.settings.SubsetSettings;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Which accepted workers a coordinator uses with {@code rollcall.subset.size}: the choice by
 * rendezvous weight, its churn and its spread over many coordinators (pure computation, no time),
 * and the cohort rule: the policy decides over the whole fleet, the subset is taken after it.
 */
class SubsetTest {

    private static Subset subset(int size, String id) {
        return new Subset(new SubsetSettings(size, id));
    }

    private static TestWorker worker(String url) {
        return new TestWorker(WorkerEndpoint.parse(url));
    }

    private static List<TestWorker> fleet(int m, int from) {
        return IntStream.range(from, from + m).mapToObj(i -> worker("grpc://10.0." + (i / 250) + "." + (i % 250)
                + ":7000")).collect(Collectors.toCollection(ArrayList::new));
    }

    private static Set<String> members(Subset s, List<TestWorker> workers) {
        return s.members(workers, w -> true);
    }

    /** A snapshot of {@code workers} (all answered) as a resolver with {@code subset} and {@code policy} builds it. */
    private static FleetSnapshot build(Subset subset, VersionPolicy policy, List<TestWorker> workers) {
        SnapshotBuilder builder = new SnapshotBuilder(policy, Clock.fixed(Instant.EPOCH, ZoneOffset.UTC), null,
                KeyPaths.none(), new LabelSettings(LabelSelector.everything(), LabelSelector.everything(), 1,
                Duration.ZERO), new VirtualTime()::read, FleetSnapshot.builder(0).publishedAt(Instant.EPOCH).build());
        builder.useSubset(subset);
        List<TestWorker> ordered = new ArrayList<>(workers);
        ordered.sort((x, y) -> x.url().compareTo(y.url()));
        return builder.build(ordered, null, null, t -> true);
    }

    @Test
    void theSameIdOverTheSameCandidatesChoosesTheSameSubsetWhateverTheirOrderAndAnotherIdAnother() {
        List<TestWorker> workers = fleet(1_000, 0);
        Set<String> first = members(subset(25, "coordinator-a"), workers);
        Collections.shuffle(workers, new Random(7));
        // New worker objects too: the weight depends on the URL and the id, nothing remembered.
        List<TestWorker> again = workers.stream().map(w -> worker(w.url())).toList();

        assertThat(first).hasSize(25);
        assertThat(members(subset(25, "coordinator-a"), again)).isEqualTo(first);
        Set<String> other = members(subset(25, "coordinator-b"), again);
        assertThat(other).hasSize(25).isNotEqualTo(first);
        // Independent choices of 25 of 1,000 share 25 × 25 / 1,000 ≈ 0.6 workers on average.
        assertThat(other.stream().filter(first::contains).count()).as("about as apart as random").isLessThan(5);
    }

    @Test
    void theSubsetIsTheTopOfTheAcceptedWorkersAndARejectedWorkerOfTopRankIsSkipped() {
        Subset s = subset(3, "c1");
        List<TestWorker> workers = fleet(10, 0);
        workers.forEach(w -> w.answer("1.0.0", "i-" + w.url(), ServingState.SERVING));
        List<TestWorker> byRank = new ArrayList<>(workers);
        byRank.sort((x, y) -> Long.compareUnsigned(s.weight(y), s.weight(x)));
        TestWorker top = byRank.get(0);
        top.answer("2.0.0", "i-top", ServingState.SERVING);
        VersionPolicy oneOh = w -> w.version().equals("1.0.0") ? Verdict.accept() : Verdict.reject("not 1.0.0");

        FleetSnapshot snapshot = build(s, oneOh, workers);

        assertThat(snapshot.workers()).extracting(w -> w.endpoint().url()).as("ranks 2 to 4: the first is rejected")
                .containsExactlyInAnyOrder(byRank.get(1).url(), byRank.get(2).url(), byRank.get(3).url());
        assertThat(snapshot.status(top.url()).orElseThrow().state()).isEqualTo(State.REJECTED);
        WorkerStatus outside = snapshot.status(byRank.get(4).url()).orElseThrow();
        assertThat(outside.state()).isEqualTo(State.OUTSIDE_SUBSET);
        assertThat(outside.reason()).contains("rollcall.subset.size").contains("'c1'");
        assertThat(snapshot.counts().outsideSubset()).isEqualTo(6);
        assertThat(snapshot.counts().compatible()).isEqualTo(3);
        assertThat(snapshot.counts().toString()).contains("6 outside this coordinator's subset");
        assertThat(snapshot.versionHistogram()).as("the fleet's versions, not the subset's")
                .isEqualTo(new TreeMap<>(Map.of("1.0.0", 9, "2.0.0", 1)));
    }

    /**
     * Replacing c of M workers: a coordinator's subset loses the members that left (c·K/M expected)
     * and the members pushed out by newcomers that rank in its top K (c·K/M expected): at most
     * 2·c·K/M = 2 in expectation for c = 100, K = 100, M = 10,000, i.e. K/M of the 2·c changes.
     * Each of the two counts is hypergeometric with mean 1 and variance below 1, so the mean over
     * 100 coordinators of their sum has a standard deviation of at most √(4 / 100) = 0.2: a
     * measured mean above 3 (five deviations) would mean the choice is not rendezvous.
     */
    @Test
    void replacingOnePercentOfTheFleetChangesAboutKOverMOfTheChangesInEachSubset() {
        int m = 10_000;
        int k = 100;
        int c = 100;
        List<TestWorker> before = fleet(m, 0);
        List<TestWorker> after = new ArrayList<>(before);
        Random r = new Random(42);
        Set<Integer> replaced = new HashSet<>();
        while (replaced.size() < c) {
            replaced.add(r.nextInt(m));
        }
        List<TestWorker> newcomers = fleet(c, m);
        int n = 0;
        for (int i : replaced) {
            after.set(i, newcomers.get(n++));
        }
        long changedMembers = 0;
        int most = 0;
        for (int id = 0; id < 100; id++) {
            Subset s = subset(k, "coordinator-" + id);
            Set<String> was = members(s, before);
            Set<String> now = members(s, after);
            int changed = (int) was.stream().filter(u -> !now.contains(u)).count();
            changedMembers += changed;
            most = Math.max(most, changed);
        }
        double mean = changedMembers / 100.0;
        double share = mean / (2.0 * c); // of the 2·c changes (c left, c joined), how many a subset took

        System.out.printf("churn: mean %.2f members changed per subset (bound 2·c·K/M = %.2f), share %.4f of the"
                + " changes (K/M = %.4f), most %d%n", mean, 2.0 * c * k / m, share, (double) k / m, most);
        assertThat(mean).as("mean members changed per subset").isLessThanOrEqualTo(3.0);
        assertThat(share).as("share of the changes a subset takes, at most K/M with the margin above")
                .isLessThanOrEqualTo(1.5 * k / m);
        // Poisson(2) exceeds 12 with probability 2·10⁻⁷; over 100 coordinators 2·10⁻⁵.
        assertThat(most).as("no coordinator's subset is reshuffled").isLessThanOrEqualTo(12);
    }

    /**
     * 100 coordinators each choose 100 of 10,000 workers: the holders of one worker number N·K/M = 1
     * on average, exactly (each coordinator holds K, so the total is N·K). Each coordinator holds a
     * given worker with probability K/M = 0.01, independently of the others (independent ids), so a
     * worker's holders are Binomial(100, 0.01): P(≥ 10) = 7.6·10⁻⁸, and by the union bound the
     * chance that any of the 10,000 workers has 10 or more is below 8·10⁻⁴.
     */
    @Test
    void aHundredCoordinatorsSpreadOverTenThousandWorkersAsABinomial() {
        int m = 10_000;
        List<TestWorker> workers = fleet(m, 0);
        Map<String, Integer> holders = new java.util.HashMap<>();
        for (int id = 0; id < 100; id++) {
            for (String url : members(subset(100, "coordinator-" + id), workers)) {
                holders.merge(url, 1, Integer::sum);
            }
        }
        int[] counts = workers.stream().mapToInt(w -> holders.getOrDefault(w.url(), 0)).toArray();
        double mean = IntStream.of(counts).average().orElseThrow();
        int max = IntStream.of(counts).max().orElseThrow();
        long none = IntStream.of(counts).filter(x -> x == 0).count();
        double sd = Math.sqrt(IntStream.of(counts).mapToDouble(x -> (x - mean) * (x - mean)).sum() / m);

        System.out.printf("spread: mean %.3f, sd %.3f (binomial %.3f), max %d, held by none %d (binomial %.0f)%n",
                mean, sd, Math.sqrt(100 * 0.01 * 0.99), max, none, m * Math.pow(0.99, 100));
        assertThat(mean).as("N·K/M exactly").isEqualTo(1.0);
        assertThat(max).as("below the binomial tail").isLessThan(10);
        // sd of Binomial(100, 0.01) is 0.995; the sample's, over 10,000 workers, is within a few percent.
        assertThat(sd).isBetween(0.9, 1.1);
    }

    /**
     * A {@code rollout}-like cohort rule ({@code minFraction} 0.5): the newest version with at
     * least half of the workers it is given. Over the fleet of 10 (6 on 2.1.0, 4 on 2.0.0) that is
     * 2.1.0 for every coordinator. Had each coordinator decided over its own 3 (the alternative
     * design), the quorum would be 2 of 3, and a coordinator whose 3 hold one 2.1.0 worker or none
     * (probability 40/120 = 1/3) would choose 2.0.0: coordinators would disagree on the cohort.
     */
    @Test
    void underACohortPolicyEveryCoordinatorChoosesTheFleetsCohortAndUsesOnlyIt() {
        List<TestWorker> workers = fleet(10, 0);
        for (int i = 0; i < workers.size(); i++) {
            workers.get(i).answer(i < 6 ? "2.1.0" : "2.0.0", "i" + i, ServingState.SERVING);
        }
        Set<String> aloneWouldChoose = new HashSet<>();
        for (int id = 0; id < 20; id++) {
            Subset s = subset(3, "coordinator-" + id);
            FleetSnapshot snapshot = build(s, new HalfQuorum(), workers);

            assertThat(snapshot.selection().cohort()).as("coordinator-%d", id).contains("2.1.0");
            assertThat(snapshot.workers()).as("coordinator-%d's three", id).hasSize(3)
                    .allMatch(w -> w.version().equals("2.1.0"));
            assertThat(snapshot.counts().outsideSubset()).isEqualTo(3);

            Set<String> own = members(s, workers);
            List<TestWorker> ownThree = workers.stream().filter(w -> own.contains(w.url())).toList();
            Selection alone = new HalfQuorum().select(ownThree.stream().map(TestWorker::info).toList());
            aloneWouldChoose.add(alone.cohort().orElse("none"));
        }
        assertThat(aloneWouldChoose).as("deciding over their own three, coordinators disagree")
                .contains("2.1.0", "2.0.0");
    }

    /** The newest version with at least half of the workers given: rollout's minFraction 0.5, in brief. */
    private static final class HalfQuorum implements VersionPolicy {
        @Override
        public Verdict check(WorkerInfo worker) {
            return Verdict.accept();
        }

        @Override
        public Selection select(List<WorkerInfo> probed) {
            Map<String, List<WorkerInfo>> byVersion = new TreeMap<>(Collections.reverseOrder());
            probed.forEach(w -> byVersion.computeIfAbsent(w.version(), v -> new ArrayList<>()).add(w));
            int quorum = (probed.size() + 1) / 2;
            String chosen = byVersion.entrySet().stream().filter(e -> e.getValue().size() >= quorum)
                    .map(Map.Entry::getKey).findFirst().orElse(null);
            List<WorkerInfo> accepted = chosen == null ? List.of() : byVersion.get(chosen);
            List<Selection.Rejection> rejected = probed.stream().filter(w -> !accepted.contains(w))
                    .map(w -> new Selection.Rejection(w, "not the chosen cohort " + chosen)).toList();
            return new Selection(accepted, rejected, java.util.Optional.ofNullable(chosen), "");
        }
    }
}
