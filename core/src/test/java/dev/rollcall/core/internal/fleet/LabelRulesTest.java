package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.labels.LabelSelector;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.probe.FakeTransport;
import dev.rollcall.core.internal.settings.LabelSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The hard selector in front of the policy and the soft preference after it, in virtual time. */
class LabelRulesTest extends TrackerHarness {

    private static final Map<String, String> PROD_EU1 = Map.of("env", "prod", "zone", "eu-1");
    private static final Map<String, String> PROD_EU2 = Map.of("env", "prod", "zone", "eu-2");

    private final WorkerEndpoint d = WorkerEndpoint.parse("grpc://127.0.0.1:7004");

    private void rules(String selector, String prefer, int min, Duration hold) {
        labels = new LabelSettings(LabelSelector.parse(selector), LabelSelector.parse(prefer), min, hold);
        tracker(64);
    }

    private String reason(WorkerEndpoint e) {
        return last().status(e.url()).orElseThrow().reason();
    }

    @Test
    void aWorkerOfAnotherEnvironmentIsRejectedBeforeThePolicySeesIt() {
        rules("env=prod", "", 1, Duration.ZERO);
        candidates(a, b);
        answer(a, "1.0.0", "i1", PROD_EU1);
        answer(b, "1.0.0", "i2", Map.of("env", "staging"));

        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
        assertThat(state(b)).isEqualTo(State.REJECTED);
        assertThat(reason(b)).isEqualTo("label env='staging' does not match env=prod (rollcall.selector)");
        assertThat(last().selection().selector()).isEqualTo("env=prod");
        assertThat(last().selection().summary()).contains("selector env=prod");
    }

    @Test
    void aWorkerMatchingTheSelectorStillHasToPassThePolicy() {
        rules("env=prod", "", 1, Duration.ZERO);
        candidates(a);
        answer(a, "2.0.0", "i1", PROD_EU1);
        assertThat(reason(a)).isEqualTo("version '2.0.0' is not 1.0.0");
    }

    @Test
    void theWorkersOwnLabelsWinOverDiscoverys() {
        rules("env=prod", "", 1, Duration.ZERO);
        WorkerEndpoint labelledProd = a.withLabels(Map.of("env", "prod"));
        WorkerEndpoint labelledStaging = b.withLabels(Map.of("env", "staging"));
        candidates(labelledProd, labelledStaging);
        answer(labelledProd, "1.0.0", "i1", Map.of("env", "staging")); // discovery says prod, the worker says not
        answer(labelledStaging, "1.0.0", "i2", Map.of("env", "prod"));
        assertThat(state(a)).isEqualTo(State.REJECTED);
        assertThat(state(b)).isEqualTo(State.COMPATIBLE);
    }

    @Test
    void discoverysLabelsCountWhenTheWorkerSaysNothingOfThem() {
        rules("env=prod", "", 1, Duration.ZERO);
        WorkerEndpoint labelled = a.withLabels(Map.of("env", "prod"));
        candidates(labelled);
        answer(labelled, "1.0.0", "i1", Map.of("zone", "eu-1"));
        assertThat(state(a)).isEqualTo(State.COMPATIBLE);
    }

    @Test
    void thePreferredZoneIsUsedAloneWhileItHasEnoughWorkers() {
        rules("", "zone=eu-1", 2, Duration.ofSeconds(30));
        candidates(a, b, c);
        answer(a, "1.0.0", "i1", PROD_EU1);
        answer(b, "1.0.0", "i2", PROD_EU1);
        answer(c, "1.0.0", "i3", PROD_EU2);

        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(a.url(), b.url());
        assertThat(reason(c)).startsWith("held back: preferring zone=eu-1: 2 of 3 compatible workers match");
        assertThat(last().selection().preference()).startsWith("preferring zone=eu-1");
    }

    @Test
    void thePreferenceFallsBackAtOnceAndReturnsOnlyAfterItsHold() {
        rules("", "zone=eu-1", 2, Duration.ofSeconds(30));
        candidates(a, b, c, d);
        answer(a, "1.0.0", "i1", PROD_EU1);
        answer(b, "1.0.0", "i2", PROD_EU1);
        answer(c, "1.0.0", "i3", PROD_EU2);
        answer(d, "1.0.0", "i4", PROD_EU2);
        assertThat(last().workers()).hasSize(2);

        net.links.get(0).drop(); // a restarts: one preferred worker left, fewer than 2
        time.runUntilIdle();
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(b.url(), c.url(), d.url());
        assertThat(last().selection().preference()).startsWith("not preferring zone=eu-1: 1 of 3");

        answer(a, "1.0.0", "i5", PROD_EU1); // enough again, but the hold has not passed
        assertThat(last().workers()).hasSize(4);
        assertThat(last().selection().preference()).startsWith("not preferring zone=eu-1 yet");

        int snapshots = published.size();
        time.advance(Duration.ofSeconds(29));
        assertThat(published).hasSize(snapshots);
        time.advance(Duration.ofSeconds(1));
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(a.url(), b.url());
        assertThat(published).as("one snapshot for the return, none in between").hasSize(snapshots + 1);
    }

    @Test
    void aPreferredWorkerFlappingAtTheThresholdSwitchesAtMostOncePerHold() {
        rules("", "zone=eu-1", 2, Duration.ofSeconds(30));
        candidates(a, b, c);
        answer(a, "1.0.0", "i1", PROD_EU1);
        answer(b, "1.0.0", "i2", PROD_EU1);
        answer(c, "1.0.0", "i3", PROD_EU2);
        int switches = 0;
        boolean preferring = true;
        for (int flap = 0; flap < 20; flap++) { // a drops and answers again every second for 20 s
            net.links.stream().filter(l -> l.endpoint.equals(a) && l.ready()).forEach(FakeTransport.FakeLink::drop);
            time.runUntilIdle();
            time.advance(Duration.ofMillis(500));
            net.unanswered().forEach(p -> p.answer("1.0.0", "a", PROD_EU1));
            time.advance(Duration.ofMillis(500));
            boolean now = last().selection().preference().startsWith("preferring");
            if (now != preferring) {
                switches++;
                preferring = now;
            }
        }
        assertThat(switches).as("fell back once, did not return within the 30 s hold").isEqualTo(1);
        // Out and back every second is flapping: a is damped, held out until its penalty decays.
        assertThat(last().status(a.url()).orElseThrow().reason()).startsWith("damped for flapping");
        time.advance(FlapDamping.MAX_HOLD);
        assertThat(last().status(a.url()).orElseThrow().state()).isEqualTo(State.COMPATIBLE);
        time.advance(Duration.ofSeconds(30)); // the preference's hold
        assertThat(last().selection().preference()).startsWith("preferring");
    }

    @Test
    void aPreferenceNobodyMatchesUsesEveryCompatibleWorker() {
        rules("", "zone=ap-1", 1, Duration.ZERO);
        candidates(a, b);
        answer(a, "1.0.0", "i1", PROD_EU1);
        answer(b, "1.0.0", "i2", PROD_EU2);
        assertThat(last().workers()).hasSize(2);
        assertThat(last().selection().preference()).startsWith("not preferring zone=ap-1: 0 of 2");
    }

    /**
     * A whole-fleet policy, as {@code rollout} is: the newest version that has a quorum of two
     * workers among those it is given.
     */
    private static final class NewestWithQuorum implements VersionPolicy {
        @Override
        public Verdict check(WorkerInfo worker) {
            return Verdict.accept();
        }

        @Override
        public Selection select(List<WorkerInfo> probed) {
            TreeMap<String, Integer> counts = new TreeMap<>();
            probed.forEach(w -> counts.merge(w.version(), 1, Integer::sum));
            String cohort = counts.descendingMap().entrySet().stream().filter(e -> e.getValue() >= 2)
                    .map(Map.Entry::getKey).findFirst().orElse(null);
            List<WorkerInfo> accepted = new ArrayList<>();
            List<Selection.Rejection> rejected = new ArrayList<>();
            for (WorkerInfo w : probed) {
                if (w.version().equals(cohort)) {
                    accepted.add(w);
                } else {
                    rejected.add(new Selection.Rejection(w,
                            "version '" + w.version() + "' is not the cohort " + cohort + " (quorum 2)"));
                }
            }
            return new Selection(accepted, rejected, Optional.ofNullable(cohort),
                    cohort + " is the newest version with 2 workers");
        }
    }

    @Test
    void aWorkerTheSelectorRejectsDoesNotCountTowardsAWholeFleetPolicysQuorum() {
        policy = new NewestWithQuorum();
        rules("env=prod", "", 1, Duration.ZERO);
        candidates(a, b, c, d);
        answer(a, "2.0.0", "i1", Map.of("env", "prod"));
        answer(b, "2.0.0", "i2", Map.of("env", "staging")); // 2.0.0's second worker, but not ours
        answer(c, "1.0.0", "i3", Map.of("env", "prod"));
        answer(d, "1.0.0", "i4", Map.of("env", "prod"));

        // Among the workers the selector allows, 2.0.0 has one: no quorum; 1.0.0 has two.
        assertThat(last().selection().cohort()).contains("1.0.0");
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(c.url(), d.url());
        assertThat(reason(a)).isEqualTo("version '2.0.0' is not the cohort 1.0.0 (quorum 2)");
        assertThat(reason(b)).isEqualTo("label env='staging' does not match env=prod (rollcall.selector)");
    }
}

