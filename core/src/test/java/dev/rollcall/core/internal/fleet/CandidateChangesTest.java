package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateSet;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.probe.FakeTransport;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A backend that hands {@link CandidateSet}s made one from another (etcd, ZooKeeper): the tracker
 * reads only the URLs that changed since the set it applied last; any other set is read against the
 * set before it. Both end where reading the whole set would have.
 */
class CandidateChangesTest extends TrackerHarness {

    private static WorkerEndpoint instance(WorkerEndpoint e, String id) {
        return e.withLabels(Map.of(WorkerEndpoint.INSTANCE_ID_LABEL, id));
    }

    private void apply(Set<WorkerEndpoint> set) {
        tracker.applyCandidates(set);
        time.runUntilIdle();
    }

    @Test
    void aSetMadeFromTheLastOneIsAppliedAsItsChangesAlone() {
        tracker(64);
        CandidateSet first = CandidateSet.of(List.of(instance(a, "p1"), b));
        apply(first);
        answer(a, "1.0.0", "p1");
        answer(b, "1.0.0", "i2");
        assertThat(tracker.wholeSetsRead()).isEqualTo(1);
        int probes = net.sent.size();

        CandidateSet joined = first.with(c);
        apply(joined);
        assertThat(net.sent).as("the newcomer alone is probed").hasSize(probes + 1);
        answer(c, "1.0.0", "i3");
        assertThat(state(c)).isEqualTo(State.COMPATIBLE);

        CandidateSet restarted = joined.with(instance(a, "p2"));
        apply(restarted);
        assertThat(state(a)).as("a new instance id: out until it answered").isEqualTo(State.PENDING);
        assertThat(net.sent).as("and probed at once").hasSize(probes + 2);

        apply(restarted.without(b.url()));
        assertThat(last().status(b.url())).as("left").isEmpty();
        assertThat(tracker.wholeSetsRead()).as("none of the later sets read whole").isEqualTo(1);
        answer(a, "1.0.0", "p2");
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactlyInAnyOrder(a.url(), c.url());
    }

    @Test
    void setsSkippedBetweenTwoAppliedOnesAreCoveredByTheChanges() {
        tracker(64);
        CandidateSet first = CandidateSet.of(List.of(a, b));
        apply(first);
        CandidateSet skipped = first.with(c);               // never applied: a newer set came first
        CandidateSet latest = skipped.without(a.url());

        apply(latest);
        assertThat(tracker.wholeSetsRead()).isEqualTo(1);
        assertThat(last().statuses()).extracting(s -> s.endpoint().url()).containsExactly(b.url(), c.url());
        assertThat(net.sentTo(c.url())).isEqualTo(1);
    }

    @Test
    void aSetOfAnotherChainOrAPlainSetIsReadAgainstTheSetBefore() {
        tracker(64);
        apply(CandidateSet.of(List.of(a, b)));
        apply(CandidateSet.of(List.of(a, c)));                // a new chain: read against the set before
        assertThat(last().statuses()).extracting(s -> s.endpoint().url()).containsExactly(a.url(), c.url());
        apply(new LinkedHashSet<>(List.of(a, instance(c, "p1"))));
        assertThat(last().status(c.url()).orElseThrow().endpoint().labels()).as("relabelled")
                .containsEntry(WorkerEndpoint.INSTANCE_ID_LABEL, "p1");
        apply(CandidateSet.of(List.of(a)).with(b));           // after a plain set, whatever it is made from
        assertThat(last().statuses()).extracting(s -> s.endpoint().url()).containsExactly(a.url(), b.url());
        assertThat(tracker.wholeSetsRead()).as("only the first set read whole").isEqualTo(1);
        assertThat(net.sentTo(b.url())).as("b probed again when it came back").isEqualTo(2);
    }

    /**
     * A set that names a URL twice, with other labels: read whole (which warns and keeps one), and so
     * is the next set, as the one before it did not name each URL once; nobody is taken out for it.
     */
    @Test
    void aSetThatNamesAUrlTwiceIsReadWhole() {
        tracker(64);
        apply(Set.of(a, b));
        answer(a, "1.0.0", "i1");
        apply(Set.of(a, instance(a, "p2"), b));
        assertThat(tracker.wholeSetsRead()).isEqualTo(2);
        assertThat(last().status(a.url())).as("still listed").isPresent();
        apply(Set.of(instance(a, "p2"), b));
        assertThat(tracker.wholeSetsRead()).as("the set before named a twice").isEqualTo(3);
        assertThat(tracker.workers()).filteredOn(t -> t.url().equals(a.url())).singleElement()
                .satisfies(t -> assertThat(t.endpoint().labels()).containsEntry(WorkerEndpoint.INSTANCE_ID_LABEL, "p2"));
        apply(Set.of(b));
        assertThat(tracker.wholeSetsRead()).as("read against the set before").isEqualTo(3);
        assertThat(last().status(a.url())).as("left").isEmpty();
        assertThat(last().statuses()).extracting(s -> s.endpoint().url()).containsExactly(b.url());
    }

    /**
     * Random changes over 60 URLs, each set applied or skipped (latest wins), beside a tracker fed the
     * same sets as plain sets (read against the set before, or whole when a URL is named twice) and one
     * that reads every set whole: all three show the same workers with the same labels and states.
     */
    @Test
    void endsWhereReadingEverySetWholeEnds() {
        Random random = new Random(7);
        tracker(1_000);
        CandidateChangesTest plain = new CandidateChangesTest();
        plain.tracker(1_000);
        CandidateChangesTest whole = new CandidateChangesTest();
        whole.tracker(1_000);
        whole.tracker.readEverySetWhole();
        // A URL named twice is relabelled in the plain trackers alone, so their histories differ, and
        // with them what flap damping makes of instance ids changing many times in one instant.
        for (CandidateChangesTest h : List.of(this, plain, whole)) {
            h.tracker.withoutFlapDamping();
        }
        CandidateSet set = CandidateSet.of();
        Map<String, String> versions = new HashMap<>();
        int twice = 0;
        for (int step = 0; step < 400; step++) {
            int n = random.nextInt(60);
            WorkerEndpoint e = WorkerEndpoint.parse("grpc://127.0.0.1:" + (8000 + n));
            set = random.nextInt(3) == 0 ? set.without(e.url())
                    : set.with(instance(e, "p" + random.nextInt(3)));
            if (random.nextInt(4) != 0) {
                Set<WorkerEndpoint> copy = new HashSet<>(set);
                if (random.nextInt(10) == 0 && !set.isEmpty()) {
                    // Now and then a plain set names a URL twice: both plain trackers read it whole.
                    WorkerEndpoint listed = set.iterator().next();
                    copy.add(instance(listed, "twice"));
                    twice++;
                }
                apply(set);
                plain.apply(copy);
                whole.apply(copy);
                answerAll(this, versions);
                answerAll(plain, versions);
                answerAll(whole, versions);
            }
        }
        apply(set);
        plain.apply(new HashSet<>(set));
        whole.apply(new HashSet<>(set));
        answerAll(this, versions);
        answerAll(plain, versions);
        answerAll(whole, versions);
        assertThat(twice).as("sets that named a URL twice").isPositive();
        assertThat(tracker.wholeSetsRead()).isLessThan(plain.tracker.wholeSetsRead());
        assertThat(plain.tracker.wholeSetsRead()).isLessThan(whole.tracker.wholeSetsRead());
        assertThat(shown(last().statuses())).isEqualTo(shown(whole.last().statuses()));
        assertThat(shown(plain.last().statuses())).isEqualTo(shown(whole.last().statuses()));
        assertThat(last().statuses()).extracting(WorkerStatus::endpoint).containsExactlyInAnyOrderElementsOf(set);
    }

    /** Answers every probe in flight with the URL's version (1.0.0 or 2.0.0, drawn once per URL). */
    private static void answerAll(CandidateChangesTest h, Map<String, String> versions) {
        for (FakeTransport.Probe p : h.net.unanswered()) {
            String url = p.link().endpoint.url();
            String version = versions.computeIfAbsent(url, u -> Math.floorMod(u.hashCode(), 2) == 0 ? "1.0.0" : "2.0.0");
            p.answer(version, "i-" + url);
            h.time.runUntilIdle();
        }
    }

    private static Set<String> shown(List<WorkerStatus> statuses) {
        return statuses.stream().map(s -> s.endpoint() + " " + s.endpoint().labels() + " " + s.state())
                .collect(Collectors.toSet());
    }
}
