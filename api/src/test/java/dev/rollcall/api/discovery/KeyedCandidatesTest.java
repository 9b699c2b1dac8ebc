package dev.rollcall.api.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeyedCandidatesTest {

    private static final WorkerEndpoint ONE = WorkerEndpoint.parse("grpc://127.0.0.1:7001");
    private static final WorkerEndpoint ONE_IN_A = ONE.withLabels(Map.of("zone", "a"));
    private static final WorkerEndpoint TWO = WorkerEndpoint.parse("grpc://127.0.0.1:7002");

    private final KeyedCandidates keyed = new KeyedCandidates();

    @Test
    void saysWhetherTheCandidatesChanged() {
        assertThat(keyed.put("k1", ONE)).isTrue();
        assertThat(keyed.put("k1", ONE)).as("the same value again").isFalse();
        assertThat(keyed.put("k2", TWO)).isTrue();
        assertThat(keyed.remove("k3")).isFalse();
        assertThat(keyed.remove("k2")).isTrue();
        assertThat(keyed.candidates()).isEqualTo(Set.of(ONE));
        assertThat(keyed.keys()).isEqualTo(1);
    }

    @Test
    void twoKeysNamingOneUrlListItOnceWithTheSmallerKeysEndpoint() {
        keyed.put("old-id", ONE);
        CandidateSet before = keyed.candidates();
        assertThat(keyed.put("new-id", ONE_IN_A)).isTrue();
        assertThat(keyed.candidates()).isEqualTo(Set.of(ONE_IN_A));
        assertThat(keyed.put("zzz", ONE)).as("a larger key changes nothing").isFalse();

        assertThat(keyed.remove("new-id")).isTrue();
        assertThat(keyed.candidates()).isEqualTo(Set.of(ONE));
        assertThat(keyed.candidates().changesSince(before)).contains(Set.of(ONE.url()));
        assertThat(keyed.remove("old-id")).as("zzz still names it").isFalse();
        assertThat(keyed.remove("zzz")).isTrue();
        assertThat(keyed.candidates()).isEmpty();
    }

    @Test
    void aKeyThatNamesAnotherUrlNowMovesItsWorker() {
        keyed.put("k", ONE);
        assertThat(keyed.put("k", TWO)).isTrue();
        assertThat(keyed.candidates()).isEqualTo(Set.of(TWO));
        assertThat(keyed.get("k")).isEqualTo(TWO);
    }

    @Test
    void aFullReadThatFindsWhatWasKnownKeepsTheSetAndItsChain() {
        keyed.put("a", ONE);
        keyed.put("b", TWO);
        CandidateSet known = keyed.candidates();

        assertThat(keyed.replaceAll(Map.of("b", TWO, "a", ONE))).isFalse();
        assertThat(keyed.candidates()).isSameAs(known);
        assertThat(keyed.replaceAll(Map.of("a", ONE_IN_A))).isTrue();
        assertThat(keyed.candidates()).isEqualTo(Set.of(ONE_IN_A));
        assertThat(keyed.put("b", TWO)).isTrue();
        assertThat(keyed.clear()).isTrue();
        assertThat(keyed.candidates()).isEmpty();
        assertThat(keyed.keys()).isZero();
    }
}
