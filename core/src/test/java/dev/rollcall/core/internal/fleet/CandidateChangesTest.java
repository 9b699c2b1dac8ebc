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
 * reads only the URLs that changed since the set it applied last, and ends where reading the whole
 * set would have.
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
    void aSetOfAnotherChainOrAPlainSetIsReadWhole() {
        tracker(64);
        apply(CandidateSet.of(List.of(a, b)));
        apply(CandidateSet.of(List.of(a, c)));                // a new chain: a full read of the registry
        assertThat(tracker.wholeSetsRead()).isEqualTo(2);
        apply(new LinkedHashSet<>(List.of(a, c)));
        apply(CandidateSet.of(List.of(a)).with(b));           // after a plain set, whatever it is made from
        assertThat(tracker.wholeSetsRead()).isEqualTo(4);
        assertThat(last().statuses()).extracting(s -> s.endpoint().url()).containsExactly(a.url(), b.url());
    }

    /**
     * Random changes over 60 URLs, each set applied or skipped (latest wins), beside a tracker fed
     * the same sets as plain sets: both show the same workers with the same labels and states.
     */
    @Test
    void endsWhereReadingEverySetWholeEnds() {
        Random random = new Random(7);
        tracker(1_000);
        FleetTracker changes = tracker;
        List<WorkerStatus> viaChanges = new ArrayList<>();
        CandidateChangesTest whole = new CandidateChangesTest();
        whole.tracker(1_000);
        CandidateSet set = CandidateSet.of();
        Map<String, String> versions = new HashMap<>();
        for (int step = 0; step < 400; step++) {
            int n = random.nextInt(60);
            WorkerEndpoint e = WorkerEndpoint.parse("grpc://127.0.0.1:" + (8000 + n));
            set = random.nextInt(3) == 0 ? set.without(e.url())
                    : set.with(instance(e, "p" + random.nextInt(3)));
            if (random.nextInt(4) != 0) {
                apply(set);
                whole.apply(new HashSet<>(set));
                answerAll(this, versions);
                answerAll(whole, versions);
            }
        }
        apply(set);
        whole.apply(new HashSet<>(set));
        answerAll(this, versions);
        answerAll(whole, versions);
        assertThat(changes.wholeSetsRead()).isLessThan(whole.tracker.wholeSetsRead());
        viaChanges.addAll(last().statuses());
        assertThat(shown(viaChanges)).isEqualTo(shown(whole.last().statuses()));
        assertThat(viaChanges).extracting(WorkerStatus::endpoint).containsExactlyInAnyOrderElementsOf(set);
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
