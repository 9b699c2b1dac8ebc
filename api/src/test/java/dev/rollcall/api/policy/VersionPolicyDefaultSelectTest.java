package dev.rollcall.api.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class VersionPolicyDefaultSelectTest {

    private static WorkerInfo worker(int n, String version) {
        return WorkerInfo.of(WorkerEndpoint.of("w" + n, 7000 + n), version);
    }

    /** Accepts version "1", rejects anything else. */
    private static final VersionPolicy ONLY_V1 = w -> w.version().equals("1")
            ? Verdict.accept()
            : Verdict.reject("version " + w.version() + " is not 1");

    @Test
    void keepsInputOrderInBothLists() {
        List<WorkerInfo> probed = List.of(worker(1, "2"), worker(2, "1"), worker(3, "3"), worker(4, "1"),
                worker(5, "1"), worker(6, "9"));

        Selection s = ONLY_V1.select(probed);

        assertThat(s.accepted()).containsExactly(probed.get(1), probed.get(3), probed.get(4));
        assertThat(s.rejected()).extracting(Selection.Rejection::worker)
                .containsExactly(probed.get(0), probed.get(2), probed.get(5));
        assertThat(s.rejected()).extracting(Selection.Rejection::reason)
                .containsExactly("version 2 is not 1", "version 3 is not 1", "version 9 is not 1");
    }

    @Test
    void partitionsEveryWorkerIntoExactlyOneList() {
        List<WorkerInfo> probed = IntStream.range(0, 50)
                .mapToObj(i -> worker(i, String.valueOf(i % 3)))
                .toList();
        // Accepts, rejects and throws, depending on the worker.
        VersionPolicy mixed = w -> switch (w.version()) {
            case "0" -> Verdict.accept();
            case "1" -> Verdict.reject("odd");
            default -> throw new IllegalStateException("cannot decide");
        };

        Selection s = mixed.select(probed);

        List<WorkerInfo> all = new ArrayList<>(s.accepted());
        s.rejected().forEach(r -> all.add(r.worker()));
        assertThat(all).hasSameSizeAs(probed).containsExactlyInAnyOrderElementsOf(probed);
        Set<WorkerInfo> accepted = new HashSet<>(s.accepted());
        assertThat(s.rejected()).noneMatch(r -> accepted.contains(r.worker()));
        assertThat(s.accepted()).allMatch(w -> w.version().equals("0")).hasSize(17);
        assertThat(s.rejected()).hasSize(33);
    }

    @Test
    void callsCheckOncePerWorker() {
        List<WorkerInfo> seen = new ArrayList<>();
        VersionPolicy recording = w -> {
            seen.add(w);
            return Verdict.accept();
        };
        List<WorkerInfo> probed = List.of(worker(1, "a"), worker(2, "b"), worker(3, "c"));

        Selection s = recording.select(probed);

        assertThat(seen).containsExactlyElementsOf(probed);
        assertThat(s.accepted()).containsExactlyElementsOf(probed);
        assertThat(s.rejected()).isEmpty();
    }

    @Test
    void emptyInputGivesEmptySelection() {
        Selection s = ONLY_V1.select(List.of());

        assertThat(s.accepted()).isEmpty();
        assertThat(s.rejected()).isEmpty();
    }

    @Test
    void exceptionFromCheckRejectsOnlyThatWorker() {
        WorkerInfo bad = worker(2, "boom");
        List<WorkerInfo> probed = List.of(worker(1, "1"), bad, worker(3, "1"));
        VersionPolicy throwing = w -> {
            if (w.version().equals("boom")) {
                throw new IllegalArgumentException("unparsable version 'boom'");
            }
            return Verdict.accept();
        };

        Selection s = throwing.select(probed);

        assertThat(s.accepted()).containsExactly(probed.get(0), probed.get(2));
        assertThat(s.rejected()).singleElement().satisfies(r -> {
            assertThat(r.worker()).isEqualTo(bad);
            assertThat(r.reason()).startsWith("policy failed").contains("unparsable version 'boom'");
        });
    }

    @Test
    void exceptionWithoutMessageStillGivesAReason() {
        VersionPolicy npe = w -> {
            throw new NullPointerException();
        };

        Selection s = npe.select(List.of(worker(1, "1")));

        assertThat(s.accepted()).isEmpty();
        assertThat(s.rejected()).singleElement()
                .extracting(Selection.Rejection::reason)
                .asString()
                .startsWith("policy failed")
                .contains("NullPointerException");
    }

    @Test
    void selectionListsAreImmutable() {
        Selection s = ONLY_V1.select(List.of(worker(1, "1"), worker(2, "2")));

        assertThatThrownBy(() -> s.accepted().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> s.rejected().clear()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void selectionCopiesItsLists() {
        List<WorkerInfo> accepted = new ArrayList<>(List.of(worker(1, "1")));
        Selection s = new Selection(accepted, List.of());

        accepted.add(worker(2, "1"));

        assertThat(s.accepted()).hasSize(1);
    }

    @Test
    void rejectionRequiresWorkerAndReason() {
        assertThatThrownBy(() -> new Selection.Rejection(null, "r")).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new Selection.Rejection(worker(1, "1"), null))
                .isInstanceOf(NullPointerException.class);
    }

    // ---------------------------------------------------------------- Verdict

    @Test
    void acceptIsAcceptedWithEmptyReason() {
        assertThat(Verdict.accept().accepted()).isTrue();
        assertThat(Verdict.accept().reason()).isEmpty();
    }

    @Test
    void rejectCarriesReason() {
        Verdict v = Verdict.reject("version 2.0.0 is outside ^1.4.0");

        assertThat(v.accepted()).isFalse();
        assertThat(v.reason()).isEqualTo("version 2.0.0 is outside ^1.4.0");
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {" ", "\t\n"})
    void rejectRequiresNonBlankReason(String reason) {
        assertThatThrownBy(() -> Verdict.reject(reason))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reason");
    }

    @Test
    void descriptionDefaultsToSimpleClassName() {
        class PinnedPolicy implements VersionPolicy {
            @Override
            public Verdict check(WorkerInfo worker) {
                return Verdict.accept();
            }
        }

        assertThat(new PinnedPolicy().description()).isEqualTo("PinnedPolicy");
    }
}
