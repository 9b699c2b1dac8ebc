package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetEvent.CohortSwitched;
import dev.rollcall.api.registry.FleetEvent.WorkerJoined;
import dev.rollcall.api.registry.FleetEvent.WorkerLeft;
import dev.rollcall.api.registry.FleetEvent.WorkerRejected;
import dev.rollcall.api.registry.WorkerStatus.State;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The events between two snapshots: what changed for coordinators, in a fixed order. */
class FleetEventTest {

    private static WorkerInfo info(int port, String version) {
        return WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", port), version);
    }

    private static WorkerStatus answered(int port, String version, State state, String reason) {
        WorkerInfo info = info(port, version);
        return new WorkerStatus(info.endpoint(), state, reason, Optional.of(info));
    }

    private static WorkerStatus silent(int port, State state, String reason) {
        return new WorkerStatus(WorkerEndpoint.of("127.0.0.1", port), state, reason, Optional.empty());
    }

    private static FleetSnapshot snapshot(long number, Optional<String> cohort, WorkerStatus... statuses) {
        return FleetSnapshot.builder(number).publishedAt(Instant.EPOCH).policy("test").statuses(List.of(statuses))
                .selection(cohort, cohort.map(c -> "chose " + c).orElse("")).build();
    }

    @Test
    void cohortSwitchThenLeftThenRejectedThenJoinedEachByUrl() {
        FleetSnapshot before = snapshot(4, Optional.of("1.0.0"),
                answered(7001, "1.0.0", State.COMPATIBLE, ""),      // leaves discovery
                answered(7002, "1.0.0", State.COMPATIBLE, ""),      // becomes unreachable
                answered(7003, "1.0.0", State.COMPATIBLE, ""),      // is probed again
                answered(7004, "1.0.0", State.COMPATIBLE, ""),      // stays
                answered(7005, "0.9.0", State.REJECTED, "too old"), // stays rejected
                silent(7006, State.PENDING, ""));                   // answers, and joins
        FleetSnapshot after = snapshot(5, Optional.of("2.0.0"),
                silent(7002, State.UNREACHABLE, "connection refused"),
                silent(7003, State.PENDING, ""),
                answered(7004, "1.0.0", State.COMPATIBLE, ""),
                answered(7005, "0.9.0", State.REJECTED, "too old"),
                answered(7006, "2.0.0", State.COMPATIBLE, ""),
                answered(7007, "3.0.0", State.REJECTED, "too new"), // new, rejected
                answered(7008, "2.0.0", State.COMPATIBLE, ""));     // new, joins

        assertThat(FleetEvent.between(before, after)).containsExactly(
                new CohortSwitched(5, Optional.of("1.0.0"), Optional.of("2.0.0"), "chose 2.0.0"),
                new WorkerLeft(5, WorkerEndpoint.of("127.0.0.1", 7001), "left discovery"),
                new WorkerLeft(5, WorkerEndpoint.of("127.0.0.1", 7002), "unreachable: connection refused"),
                new WorkerLeft(5, WorkerEndpoint.of("127.0.0.1", 7003), "pending"),
                new WorkerRejected(5, info(7007, "3.0.0"), "too new"),
                new WorkerJoined(5, info(7006, "2.0.0")),
                new WorkerJoined(5, info(7008, "2.0.0")));
    }

    @Test
    void aSnapshotOfAnotherMakeListingItsWorkersOutOfOrderGivesTheSameEvents() {
        FleetSnapshot before = snapshot(4, Optional.of("1.0.0"),
                answered(7001, "1.0.0", State.COMPATIBLE, ""),
                answered(7002, "1.0.0", State.COMPATIBLE, ""),
                silent(7003, State.PENDING, ""));
        FleetSnapshot after = snapshot(5, Optional.of("1.0.0"),
                answered(7002, "1.0.0", State.COMPATIBLE, ""),
                answered(7003, "1.0.0", State.COMPATIBLE, ""),
                answered(7004, "2.0.0", State.REJECTED, "too new"));
        List<FleetEvent> expected = List.of(
                new WorkerLeft(5, WorkerEndpoint.of("127.0.0.1", 7001), "left discovery"),
                new WorkerRejected(5, info(7004, "2.0.0"), "too new"),
                new WorkerJoined(5, info(7003, "1.0.0")));

        assertThat(FleetEvent.between(before, after)).containsExactlyElementsOf(expected);
        assertThat(FleetEvent.between(reversed(before), reversed(after))).containsExactlyElementsOf(expected);
        assertThat(FleetEvent.between(before, reversed(after))).containsExactlyElementsOf(expected);
    }

    /** {@code snapshot} as a user's own implementation might hand it over: its statuses in reverse URL order. */
    private static FleetSnapshot reversed(FleetSnapshot snapshot) {
        return (FleetSnapshot) java.lang.reflect.Proxy.newProxyInstance(FleetSnapshot.class.getClassLoader(),
                new Class<?>[] {FleetSnapshot.class}, (proxy, method, args) -> {
                    if (method.getName().equals("statuses") && method.getParameterCount() == 0) {
                        List<WorkerStatus> statuses = new java.util.ArrayList<>(snapshot.statuses());
                        java.util.Collections.reverse(statuses);
                        return statuses;
                    }
                    return method.invoke(snapshot, args);
                });
    }

    @Test
    void aWorkerRejectedBeforeIsNotRejectedAgainAndTheSameSnapshotTwiceIsNoEvent() {
        FleetSnapshot one = snapshot(1, Optional.empty(), answered(7001, "1.0.0", State.COMPATIBLE, ""),
                answered(7002, "0.1.0", State.REJECTED, "too old"));
        FleetSnapshot two = snapshot(2, Optional.empty(), answered(7001, "1.0.0", State.REJECTED, "now rejected"),
                answered(7002, "0.1.0", State.REJECTED, "too old"));

        assertThat(FleetEvent.between(one, one)).isEmpty();
        assertThat(FleetEvent.between(one, two)).containsExactly(
                new WorkerLeft(2, WorkerEndpoint.of("127.0.0.1", 7001), "rejected: now rejected"),
                new WorkerRejected(2, info(7001, "1.0.0"), "now rejected"));
    }

    private static WorkerStatus claimed(int port, String claim, String answer, State state) {
        WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", port).withLabels(java.util.Map.of(WorkerEndpoint.VERSION_LABEL, claim));
        return new WorkerStatus(e, state, "", Optional.of(WorkerInfo.of(e, answer)));
    }

    @Test
    void aClaimThatDiffersFromTheAnswerIsToldOncePerPairAndLast() {
        FleetSnapshot one = snapshot(1, Optional.empty(), claimed(7001, "1.4.0", "1.4.0", State.COMPATIBLE));
        FleetSnapshot two = snapshot(2, Optional.empty(), claimed(7001, "1.4.0", "1.5.0", State.COMPATIBLE),
                claimed(7002, "1.4.0", "1.5.0", State.REJECTED));
        FleetSnapshot three = snapshot(3, Optional.empty(), claimed(7001, "1.4.0", "1.5.0", State.COMPATIBLE),
                claimed(7002, "1.6.0", "1.5.0", State.REJECTED));

        assertThat(FleetEvent.between(one, one)).as("a claim the answer confirms").isEmpty();
        List<FleetEvent> events = FleetEvent.between(one, two);
        assertThat(events).last().isEqualTo(new FleetEvent.VersionClaimDiffers(2,
                WorkerEndpoint.of("127.0.0.1", 7002).withLabels(java.util.Map.of(WorkerEndpoint.VERSION_LABEL, "1.4.0")),
                "1.4.0", "1.5.0"));
        assertThat(events).filteredOn(FleetEvent.VersionClaimDiffers.class::isInstance).hasSize(2)
                .first().extracting(e -> ((FleetEvent.VersionClaimDiffers) e).description())
                .isEqualTo("claimed 1.4.0, answered 1.5.0");
        assertThat(FleetEvent.between(two, three)).as("7001 told already; 7002 claims anew")
                .containsExactly(new FleetEvent.VersionClaimDiffers(3, WorkerEndpoint.of("127.0.0.1", 7002)
                        .withLabels(java.util.Map.of(WorkerEndpoint.VERSION_LABEL, "1.6.0")), "1.6.0", "1.5.0"));
    }

    @Test
    void aDampedWorkerIsToldOnceWhenDampedEvenWhenItsHoldIsExtendedAndOnceWhenItReturns() {
        String held = "damped for flapping: its verdict or version changed too often; held out until ";
        FleetSnapshot one = snapshot(1, Optional.empty(), answered(7001, "1.4.0", State.COMPATIBLE, ""));
        FleetSnapshot two = snapshot(2, Optional.empty(), answered(7001, "1.4.0", State.REJECTED, held + "T1"));
        FleetSnapshot three = snapshot(3, Optional.empty(), answered(7001, "1.4.0", State.REJECTED, held + "T2"));
        FleetSnapshot four = snapshot(4, Optional.empty(), answered(7001, "9.9.9", State.REJECTED, "not ^1.4.0"));
        WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", 7001);

        assertThat(FleetEvent.between(one, two)).containsExactly(
                new WorkerLeft(2, e, "rejected: " + held + "T1"),
                new WorkerRejected(2, info(7001, "1.4.0"), held + "T1"),
                new FleetEvent.WorkerDamped(2, e, held + "T1"));
        assertThat(FleetEvent.between(two, three)).as("a hold extended").isEmpty();
        assertThat(FleetEvent.between(three, four)).containsExactly(new FleetEvent.WorkerUndamped(4, e));
        assertThat(FleetEvent.WorkerDamped.shows(answered(7001, "1.4.0", State.REJECTED, "too old"))).isFalse();
    }
}
