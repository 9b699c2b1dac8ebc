package dev.rollcall.api.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CandidateSetTest {

    private static WorkerEndpoint worker(int n) {
        return WorkerEndpoint.parse("grpc://127.0.0.1:" + (7000 + n));
    }

    private static WorkerEndpoint worker(int n, String zone) {
        return worker(n).withLabels(Map.of("zone", zone));
    }

    @Test
    void isEqualToAnySetOfTheSameEndpointsLabelsIncluded() {
        CandidateSet set = CandidateSet.of(List.of(worker(1), worker(2, "a")));

        assertThat(set).isEqualTo(Set.of(worker(1), worker(2, "a")));
        assertThat(Set.of(worker(1), worker(2, "a"))).isEqualTo(set);
        assertThat(set.hashCode()).isEqualTo(Set.of(worker(1), worker(2, "a")).hashCode());
        assertThat(set).isNotEqualTo(Set.of(worker(1), worker(2, "b")));
        assertThat(set.contains(worker(2, "a"))).isTrue();
        assertThat(set.contains(worker(2, "b"))).as("same URL, other labels").isFalse();
        assertThat(set.get(worker(2).url())).contains(worker(2, "a"));
    }

    @Test
    void refusesTwoEndpointsForOneUrlNamingIt() {
        assertThatThrownBy(() -> CandidateSet.of(List.of(worker(1, "a"), worker(1, "b"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("grpc://127.0.0.1:7001");
    }

    @Test
    void aChangeThatChangesNothingIsTheSameSet() {
        CandidateSet set = CandidateSet.of(List.of(worker(1), worker(2)));

        assertThat(set.with(worker(1))).isSameAs(set);
        assertThat(set.without(worker(3).url())).isSameAs(set);
        assertThat(set.with(worker(1, "a"))).isNotSameAs(set).contains(worker(1, "a")).doesNotContain(worker(1));
    }

    @Test
    void saysWhichUrlsChangedSinceAnEarlierSetOfItsChain() {
        CandidateSet start = CandidateSet.of(List.of(worker(1), worker(2), worker(3)));
        CandidateSet joined = start.with(worker(4));
        CandidateSet relabelled = joined.with(worker(2, "b"));
        CandidateSet left = relabelled.without(worker(3).url());

        assertThat(left.changesSince(start)).contains(Set.of(worker(4).url(), worker(2).url(), worker(3).url()));
        assertThat(left.changesSince(joined)).contains(Set.of(worker(2).url(), worker(3).url()));
        assertThat(left.changesSince(left)).contains(Set.of());
        assertThat(start.changesSince(left)).as("a later set is no ancestor").isEmpty();
        assertThat(left.changesSince(CandidateSet.of(List.of(worker(1), worker(2), worker(3)))))
                .as("an equal set of another chain").isEmpty();
        assertThat(left).isEqualTo(Set.of(worker(1), worker(2, "b"), worker(4)));
    }

    @Test
    void twoBranchesOfOneSetDoNotKnowEachOther() {
        CandidateSet start = CandidateSet.of(List.of(worker(1)));
        CandidateSet one = start.with(worker(2));
        CandidateSet other = start.with(worker(3));

        assertThat(one.changesSince(other)).isEmpty();
        assertThat(one.changesSince(start)).contains(Set.of(worker(2).url()));
    }

    @Test
    void startsTheChainOverOnceTheChangesOutgrowTheSquareRootOfTheSet() {
        List<WorkerEndpoint> many = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            many.add(worker(i));
        }
        CandidateSet start = CandidateSet.of(many);
        CandidateSet set = start;
        for (int i = 400; i < 420; i++) {
            set = set.with(worker(i));
        }
        assertThat(set.changesSince(start)).as("20 changes: within √400").hasValueSatisfying(urls -> assertThat(urls).hasSize(20));
        CandidateSet beforeFold = set;
        set = set.with(worker(420));
        assertThat(set.changesSince(start)).as("the 21st folds").isEmpty();
        assertThat(set.changesSince(beforeFold)).isEmpty();
        assertThat(set).hasSize(421).isEqualTo(new HashSet<>(set));
        assertThat(set.with(worker(421)).changesSince(set)).contains(Set.of(worker(421).url()));
    }

    /** Random changes against a plain map: contents, size, hash and equality always agree. */
    @Test
    void agreesWithAPlainMapOverRandomChanges() {
        Random random = new Random(42);
        Map<String, WorkerEndpoint> model = new HashMap<>();
        CandidateSet set = CandidateSet.of();
        CandidateSet mark = set;
        Set<String> sinceMark = new HashSet<>();
        for (int step = 0; step < 5_000; step++) {
            int n = random.nextInt(300);
            CandidateSet before = set;
            if (random.nextInt(3) == 0) {
                model.remove(worker(n).url());
                set = set.without(worker(n).url());
            } else {
                WorkerEndpoint e = worker(n, "z" + random.nextInt(3));
                model.put(e.url(), e);
                set = set.with(e);
            }
            if (set != before) {
                sinceMark.add(worker(n).url());
            }
            Set<WorkerEndpoint> expected = new HashSet<>(model.values());
            assertThat(set).hasSize(expected.size());
            assertThat(set.hashCode()).isEqualTo(expected.hashCode());
            assertThat(set.equals(expected) && expected.equals(set)).isTrue();
            assertThat(new HashSet<>(set)).isEqualTo(expected);
            Optional<Set<String>> changes = set.changesSince(mark);
            if (changes.isPresent() && set != mark) { // the very same set: nothing to say, whatever happened between
                assertThat(changes.get()).isEqualTo(sinceMark);
            }
            if (random.nextInt(10) == 0) {
                mark = set;
                sinceMark.clear();
            }
        }
    }

    @Test
    void setsOfOneChainCompareByWhatChangedAndStillByContent() {
        CandidateSet start = CandidateSet.of(List.of(worker(1), worker(2)));
        CandidateSet back = start.with(worker(3)).without(worker(3).url());

        assertThat(back).isEqualTo(start).isNotSameAs(start);
        assertThat(start.with(worker(2, "a"))).isNotEqualTo(start.with(worker(2, "b")));
    }

    @Test
    void refusesToChange() {
        CandidateSet set = CandidateSet.of(List.of(worker(1)));
        assertThatThrownBy(() -> set.add(worker(2))).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> set.iterator().remove()).isInstanceOf(UnsupportedOperationException.class);
    }
}
