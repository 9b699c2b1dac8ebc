package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A snapshot made from the previous one ({@link FleetSnapshot.Builder#previous}) reads only the
 * statuses that differ from its own: whatever changed, it must answer exactly as one made from
 * scratch over the same statuses.
 */
class SnapshotFromPreviousTest {

    private static final String[] VERSIONS = {"1.0.0", "1.1.0", "2.0.0"};

    private static WorkerStatus random(SplittableRandom r, int port) {
        WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", port);
        WorkerStatus.State state = WorkerStatus.State.values()[r.nextInt(WorkerStatus.State.values().length)];
        boolean answered = state == WorkerStatus.State.COMPATIBLE || state == WorkerStatus.State.REJECTED
                || state == WorkerStatus.State.OUTSIDE_SUBSET || state == WorkerStatus.State.LACKS_REQUIREMENT
                || r.nextBoolean() && state != WorkerStatus.State.UNREACHABLE;
        Optional<WorkerInfo> info = answered
                ? Optional.of(new WorkerInfo(e, VERSIONS[r.nextInt(VERSIONS.length)], "i" + r.nextInt(), Map.of(), List.of()))
                : Optional.empty();
        return new WorkerStatus(e, state, state == WorkerStatus.State.COMPATIBLE ? "" : "why " + r.nextInt(9), info);
    }

    private static void assertSameAnswers(FleetSnapshot fromPrevious, FleetSnapshot fromScratch) {
        assertThat(fromPrevious.statuses()).isEqualTo(fromScratch.statuses());
        assertThat(fromPrevious.workers()).isEqualTo(fromScratch.workers());
        assertThat(fromPrevious.compatibleEndpoints()).isEqualTo(fromScratch.compatibleEndpoints());
        assertThat(fromPrevious.counts()).isEqualTo(fromScratch.counts());
        assertThat(fromPrevious.versionHistogram()).isEqualTo(fromScratch.versionHistogram());
        assertThat(fromPrevious.selection()).isEqualTo(fromScratch.selection());
    }

    @Test
    void answersAsASnapshotMadeFromScratchWhateverJoinedLeftOrChanged() {
        SplittableRandom r = new SplittableRandom(24);
        List<WorkerStatus> current = new ArrayList<>();
        for (int port = 7000; port < 7200; port += 2) {
            current.add(random(r, port));
        }
        FleetSnapshot previous = FleetSnapshot.builder(1).publishedAt(Instant.EPOCH).statuses(current).build();
        for (int round = 2; round < 300; round++) {
            List<WorkerStatus> next = new ArrayList<>();
            for (WorkerStatus s : current) {
                int roll = r.nextInt(20);
                if (roll == 0) {
                    continue; // left
                }
                // changed (a new status object for the same URL), or kept as it was (the same object)
                next.add(roll == 1 ? random(r, s.endpoint().port()) : s);
            }
            for (int joined = r.nextInt(4); joined > 0; joined--) {
                int port = 7000 + r.nextInt(400);
                if (next.stream().noneMatch(s -> s.endpoint().port() == port)) {
                    next.add(random(r, port));
                }
            }
            next.sort(Comparator.comparing(s -> s.endpoint().url()));
            if (round % 50 == 0) {
                Collections.shuffle(next, new java.util.Random(round)); // out of order: sorted as without the hint
            }
            // Odd rounds hand the statuses over as an array (the resolver's way), even ones add them.
            FleetSnapshot fromPrevious = round % 2 == 1
                    ? InternalSnapshots.buildAfter(FleetSnapshot.builder(round).publishedAt(Instant.EPOCH),
                            next.toArray(new WorkerStatus[0]), previous)
                    : InternalSnapshots.buildAfter(FleetSnapshot.builder(round).publishedAt(Instant.EPOCH).statuses(next), previous);
            FleetSnapshot fromScratch = FleetSnapshot.builder(round).publishedAt(Instant.EPOCH).statuses(next).build();
            assertSameAnswers(fromPrevious, fromScratch);
            previous = fromPrevious;
            current = new ArrayList<>(fromPrevious.statuses());
        }
        assertThat(previous.counts().candidates()).as("the fleet after the rounds").isPositive();
    }

    @Test
    void manyWorkersTurningCompatibleAtOnceAreAllListedInUrlOrder() {
        // A snapshot from its previous one makes room for a few more compatible workers than it had;
        // a burst of hundreds (a fleet answering together) must still list every one, and a fleet
        // that then loses most again must not keep listing those gone.
        List<WorkerStatus> pending = new ArrayList<>();
        List<WorkerStatus> compatible = new ArrayList<>();
        for (int port = 7000; port < 8000; port++) {
            WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", port);
            pending.add(new WorkerStatus(e, WorkerStatus.State.PENDING, "not probed yet", Optional.empty()));
            compatible.add(new WorkerStatus(e, WorkerStatus.State.COMPATIBLE, "",
                    Optional.of(new WorkerInfo(e, VERSIONS[port % 2], "i" + port, Map.of(), List.of()))));
        }
        List<List<WorkerStatus>> steps = new ArrayList<>();
        for (int ready : new int[] {0, 1, 70, 71, 400, 1000, 10, 0, 999}) {
            List<WorkerStatus> step = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                step.add(i < ready ? compatible.get(i) : pending.get(i));
            }
            steps.add(step);
        }
        FleetSnapshot previous = null;
        long n = 1;
        for (List<WorkerStatus> step : steps) {
            FleetSnapshot fromPrevious = InternalSnapshots.buildAfter(FleetSnapshot.builder(n).publishedAt(Instant.EPOCH),
                    step.toArray(new WorkerStatus[0]), previous);
            FleetSnapshot fromScratch = FleetSnapshot.builder(n++).publishedAt(Instant.EPOCH).statuses(step).build();
            assertSameAnswers(fromPrevious, fromScratch);
            assertThat(fromPrevious.workers()).hasSize(fromScratch.counts().compatible());
            previous = fromPrevious;
        }
    }

    @Test
    void statusesHandedOverMustBeTheOnlyOnesAndNoneNull() {
        WorkerEndpoint a = WorkerEndpoint.of("127.0.0.1", 7001);
        WorkerStatus pending = new WorkerStatus(a, WorkerStatus.State.PENDING, "not probed yet", Optional.empty());
        assertThatThrownBy(() -> InternalSnapshots.buildAfter(FleetSnapshot.builder(1).status(pending),
                new WorkerStatus[] {pending}, null)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("statuses were added");
        assertThatThrownBy(() -> InternalSnapshots.buildAfter(FleetSnapshot.builder(1), new WorkerStatus[] {pending, null}, null))
                .isInstanceOf(NullPointerException.class).hasMessage("status");
        assertThatThrownBy(() -> FleetSnapshot.builder(1).statuses(java.util.Arrays.asList(pending, null)))
                .isInstanceOf(NullPointerException.class).hasMessage("status");
    }

    @Test
    void aFleetThatEmptiesAndFillsAgainIsCountedFromItsPrevious() {
        WorkerEndpoint a = WorkerEndpoint.of("127.0.0.1", 7001);
        WorkerStatus compatible = new WorkerStatus(a, WorkerStatus.State.COMPATIBLE, "",
                Optional.of(new WorkerInfo(a, "1.0.0", "i1", Map.of(), List.of())));
        FleetSnapshot one = FleetSnapshot.builder(1).statuses(List.of(compatible)).build();
        FleetSnapshot none = InternalSnapshots.buildAfter(FleetSnapshot.builder(2).statuses(List.of()), one);
        assertThat(none.counts().candidates()).isZero();
        assertThat(none.versionHistogram()).isEmpty();
        FleetSnapshot again = InternalSnapshots.buildAfter(FleetSnapshot.builder(3).statuses(List.of(compatible)), none);
        assertThat(again.workers()).containsExactly(compatible.info().orElseThrow());
        assertThat(again.versionHistogram()).containsExactly(Map.entry("1.0.0", 1));
    }
}
