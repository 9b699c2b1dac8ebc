package dev.rollcall.server;

import static dev.rollcall.server.ServedFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.PeerText;
import dev.rollcall.protocol.v1.Capability;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.FleetWorker;
import dev.rollcall.protocol.v1.FleetWorkerState;
import dev.rollcall.protocol.v1.GetFleetRequest;
import dev.rollcall.protocol.v1.HoldFleetRequest;
import dev.rollcall.protocol.v1.HoldFleetResponse;
import dev.rollcall.protocol.v1.WatchFleetRequest;
import dev.rollcall.testkit.FinestLogCapture;
import dev.rollcall.testkit.HostileText;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The fleet API with requirements (fleet.proto's {@code requirements}): each answer is the snapshot
 * narrowed to them, every worker carries its capabilities, a worker that drops one is left out of
 * the next message, change messages still add up, a hold keeps every worker while it answers with
 * the narrowed list, and a malformed requirement is refused naming it, escaped, with nothing else
 * lost.
 */
class FleetRequirementsTest {

    private static final String GEO = "udf:geo_distance";
    private static final FleetWorkerState COMPATIBLE = FleetWorkerState.FLEET_WORKER_STATE_COMPATIBLE;
    private static final FleetWorkerState LACKS = FleetWorkerState.FLEET_WORKER_STATE_LACKS_REQUIREMENT;

    @Test
    void getFleetWithRequirementsListsOnlyTheWorkersThatMeetThemAndSaysWhatEachOtherLacks() throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker geo = fleet.capable("1.0.0", GEO, "plan-protocol=3");
            RollcallWorker plain = fleet.capable("1.0.0", "plan-protocol=2");
            RollcallWorker old = fleet.capable("0.9.0", GEO);
            fleet.list(geo, plain, old);
            long number = fleet.resolver.await(s -> s.workers().size() == 2 && s.counts().rejected() == 1, WAIT)
                    .number();

            FleetSnapshot narrowed = fleet.blocking().getFleet(GetFleetRequest.newBuilder().addRequirements(GEO).build());
            assertThat(narrowed.getNumber()).isEqualTo(number);
            assertThat(narrowed.getWorkersList()).singleElement().satisfies(w -> {
                assertThat(w.getUrl()).isEqualTo(geo.endpoint().url());
                assertThat(w.getCapabilitiesList()).containsExactlyInAnyOrder(capability(GEO, ""),
                        capability("plan-protocol", "3"));
            });
            assertThat(entry(narrowed, plain)).satisfies(w -> {
                assertThat(w.getState()).isEqualTo(LACKS);
                assertThat(w.getReason()).isEqualTo("lacks udf:geo_distance");
            });
            assertThat(entry(narrowed, old).getState()).as("the policy still decides first")
                    .isEqualTo(FleetWorkerState.FLEET_WORKER_STATE_REJECTED);
            assertThat(narrowed.getCounts().getCompatible()).isEqualTo(1);
            assertThat(narrowed.getCounts().getLacksRequirement()).isEqualTo(1);
            assertThat(narrowed.getCounts().getRejected()).isEqualTo(1);

            FleetSnapshot ranged = fleet.blocking().getFleet(GetFleetRequest.newBuilder()
                    .addRequirements("plan-protocol>=3").build());
            assertThat(entry(ranged, plain).getReason()).isEqualTo("lacks plan-protocol>=3 (has plan-protocol=2)");

            FleetSnapshot whole = fleet.blocking().getFleet(GetFleetRequest.getDefaultInstance());
            assertThat(whole.getWorkersList()).hasSize(2);
            assertThat(whole.getCounts().getLacksRequirement()).isZero();
            assertThat(entry(whole, plain).getCapabilitiesList()).as("capabilities without requirements too")
                    .containsExactly(capability("plan-protocol", "2"));
        }
    }

    @Test
    void aWatcherWithRequirementsSeesAWorkerThatDropsACapabilityLackItAndChangeMessagesAddUpToTheWholeAnswers()
            throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker a = fleet.capable("1.0.0", GEO);
            RollcallWorker b = fleet.capable("1.0.0", GEO);
            RollcallWorker plain = fleet.capable("1.0.0");
            fleet.list(a, b, plain);
            fleet.resolver.awaitWorkers(3, WAIT);
            List<FleetSnapshot> whole = new CopyOnWriteArrayList<>();
            List<FleetSnapshot> changes = new CopyOnWriteArrayList<>();
            List<FleetSnapshot> everyone = new CopyOnWriteArrayList<>();
            FleetServiceGrpc.newStub(fleet.channel()).watchFleet(WatchFleetRequest.newBuilder()
                    .addRequirements(GEO).build(), FleetSnapshotsOverGrpcTest.collect(whole));
            FleetServiceGrpc.newStub(fleet.channel()).watchFleet(WatchFleetRequest.newBuilder()
                    .addRequirements(GEO).setChangesOnly(true).build(), FleetSnapshotsOverGrpcTest.collect(changes));
            FleetServiceGrpc.newStub(fleet.channel()).watchFleet(WatchFleetRequest.getDefaultInstance(),
                    FleetSnapshotsOverGrpcTest.collect(everyone));
            await().atMost(WAIT).until(() -> !whole.isEmpty() && !changes.isEmpty() && !everyone.isEmpty());
            assertThat(whole.get(0).getWorkersCount()).isEqualTo(2);

            b.capabilities(Capabilities.none()); // pushed on the worker's watch stream
            awaitState("b lacks it", changes, s -> state(s, b).filter(w -> w.getState() == LACKS
                    && w.getReason().equals("lacks udf:geo_distance")).isPresent());
            plain.labels(Map.of("rack", "r2")); // a lacking worker that changes otherwise
            awaitState("plain relabelled", changes, s -> state(s, plain)
                    .filter(w -> w.getState() == LACKS && "r2".equals(w.getLabelsOrDefault("rack", ""))).isPresent());
            a.labels(Map.of("rack", "r3")); // a publish for a worker that has it: lacking ones unchanged
            awaitState("a relabelled", changes, s -> state(s, a)
                    .filter(w -> w.getState() == COMPATIBLE && "r3".equals(w.getLabelsOrDefault("rack", ""))).isPresent());
            b.capabilities(Capabilities.of(GEO));
            awaitState("b has it again", changes, s -> state(s, b).filter(w -> w.getState() == COMPATIBLE).isPresent());
            long newest = fleet.resolver.pin().number();
            await().atMost(WAIT).until(() -> FleetSnapshotsOverGrpcTest.last(whole).getNumber() == newest
                    && FleetSnapshotsOverGrpcTest.last(changes).getNumber() == newest
                    && FleetSnapshotsOverGrpcTest.last(everyone).getNumber() == newest);

            assertThat(everyone).as("a watcher without requirements never sees LACKS_REQUIREMENT")
                    .allSatisfy(s -> assertThat(s.getExcludedList()).isEmpty());
            Map<Long, FleetSnapshot> byNumber = new HashMap<>();
            whole.forEach(s -> byNumber.put(s.getNumber(), s));
            FleetSnapshot held = null;
            List<FleetSnapshot> changeMessages = new ArrayList<>();
            for (FleetSnapshot m : changes) {
                held = FleetChanges.apply(held, m);
                assertThat(byNumber).as("the whole watcher was sent %d too", m.getNumber()).containsKey(m.getNumber());
                assertThat(FleetChanges.byUrl(held)).as("state after message %d", m.getNumber())
                        .isEqualTo(FleetChanges.byUrl(byNumber.get(m.getNumber())));
                if (m.getBaseNumber() > 0) {
                    changeMessages.add(m);
                }
            }
            assertThat(changeMessages).as("change messages among %d", changes.size()).isNotEmpty();
            for (FleetSnapshot m : changeMessages) {
                FleetSnapshot base = byNumber.get(m.getBaseNumber());
                for (FleetWorker w : entries(m)) {
                    assertThat(entries(base).stream().filter(e -> e.getUrl().equals(w.getUrl())).findFirst())
                            .as("message %d carries %s, which changed", m.getNumber(), w.getUrl())
                            .isNotEqualTo(Optional.of(w));
                }
            }
        }
    }

    /** How long a close() that must wait is watched not returning: longer than a release takes. */
    private static final Duration QUIET = Duration.ofMillis(700);

    @Test
    void aHoldWithRequirementsAnswersNarrowedAndStillHoldsTheWorkersItLeavesOut() throws Exception {
        try (ServedFleet fleet = ServedFleet.start(true, Map.of())) {
            RollcallWorker geo = fleet.capable("1.0.0", GEO);
            RollcallWorker plain = fleet.capable("1.0.0", Duration.ofSeconds(30));
            fleet.list(geo, plain);
            fleet.resolver.awaitWorkers(2, WAIT);
            await().atMost(WAIT).until(() -> plain.coordinatorsHolding() == 1);
            Context.CancellableContext hold = Context.current().withCancellation();
            HoldFleetResponse held = hold.call(() -> FleetServiceGrpc.newBlockingStub(fleet.channel())
                    .holdFleet(HoldFleetRequest.newBuilder().addRequirements(GEO).build()).next());
            assertThat(held.getSnapshot().getWorkersList()).extracting(FleetWorker::getUrl)
                    .containsExactly(geo.endpoint().url());
            assertThat(entry(held.getSnapshot(), plain).getState()).isEqualTo(LACKS);

            CompletableFuture<Void> closed = CompletableFuture.runAsync(plain::close);
            fleet.resolver.await(s -> s.workers().size() == 1, WAIT); // drained: a newer snapshot leaves it out
            await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> !closed.isDone());
            assertThat(plain.coordinatorsHolding()).as("the narrowed hold still holds the worker it left out").isOne();

            hold.cancel(null);
            closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(fleet.server.holds()).isZero();
        }
    }

    @Test
    void aMalformedRequirementIsRefusedInvalidArgumentNamingItEscapedBeforeAnyStreamOpensAndOthersCarryOn()
            throws Exception {
        String hostile = HostileText.forging("requirement");
        String named = "requirement '" + PeerText.escape(hostile.strip(), 60) + "'";
        try (FinestLogCapture log = new FinestLogCapture(); ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker a = fleet.capable("1.0.0", GEO);
            RollcallWorker b = fleet.capable("1.0.0", GEO);
            fleet.list(a);
            fleet.resolver.awaitWorkers(1, WAIT);
            List<FleetSnapshot> good = new CopyOnWriteArrayList<>();
            FleetServiceGrpc.newStub(fleet.channel()).watchFleet(WatchFleetRequest.newBuilder()
                    .addRequirements(GEO).build(), FleetSnapshotsOverGrpcTest.collect(good));
            await().atMost(WAIT).until(() -> !good.isEmpty());

            Status got = refusal(() -> fleet.blocking().getFleet(GetFleetRequest.newBuilder()
                    .addRequirements(GEO).addRequirements(hostile).build()));
            assertInvalid(got, "GetFleetRequest.requirements", named);

            List<FleetSnapshot> refusedMessages = new CopyOnWriteArrayList<>();
            AtomicReference<Throwable> refusedWatch = new AtomicReference<>();
            FleetServiceGrpc.newStub(fleet.channel()).watchFleet(WatchFleetRequest.newBuilder()
                    .addRequirements(hostile).setChangesOnly(true).build(), new StreamObserver<>() {
                        @Override
                        public void onNext(FleetSnapshot value) {
                            refusedMessages.add(value);
                        }

                        @Override
                        public void onError(Throwable t) {
                            refusedWatch.set(t);
                        }

                        @Override
                        public void onCompleted() {
                        }
                    });
            await().atMost(WAIT).until(() -> refusedWatch.get() != null);
            assertInvalid(Status.fromThrowable(refusedWatch.get()), "WatchFleetRequest.requirements", named);
            assertThat(refusedMessages).as("a refused stream is sent nothing").isEmpty();

            got = refusal(() -> FleetServiceGrpc.newBlockingStub(fleet.channel())
                    .holdFleet(HoldFleetRequest.newBuilder().addRequirements("plan-protocol>=banana").build()).next());
            assertInvalid(got, "HoldFleetRequest.requirements", "requirement 'plan-protocol>=banana'");

            got = refusal(() -> fleet.blocking().getFleet(GetFleetRequest.newBuilder()
                    .addAllRequirements(Collections.nCopies(33, GEO)).build()));
            assertInvalid(got, "GetFleetRequest.requirements", "33 requirements (at most 32)");

            got = refusal(() -> fleet.blocking().getFleet(GetFleetRequest.newBuilder()
                    .addAllRequirements(Collections.nCopies(20, "udf:" + "x".repeat(250))).build()));
            assertThat(got.getCode()).as("the request size bound comes first").isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(got.getDescription()).contains("rollcall.serve.max-request-bytes=4096");

            await().atMost(WAIT).until(() -> fleet.server.watchers() == 1 && fleet.server.holds() == 0);
            fleet.list(a, b);
            await("the good watcher goes on").atMost(WAIT).until(() ->
                    FleetSnapshotsOverGrpcTest.last(good).getWorkersCount() == 2);
            assertThat(HostileText.rawInLog(log.text())).as("hostile text that reached a log line raw").isEmpty();
            assertThat(log.text()).as("the refusal is logged, escaped").contains(named);
        }
    }

    private static void assertInvalid(Status status, String field, String named) {
        assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(status.getDescription()).startsWith(field + ": ").contains(named);
        assertThat(HostileText.rawInLog(status.getDescription())).isEmpty();
    }

    private static Status refusal(Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
        throw new AssertionError("the call was not refused");
    }

    private static Capability capability(String name, String version) {
        return Capability.newBuilder().setName(name).setVersion(version).build();
    }

    private static List<FleetWorker> entries(FleetSnapshot s) {
        List<FleetWorker> all = new ArrayList<>(s.getWorkersList());
        all.addAll(s.getExcludedList());
        return all;
    }

    private static FleetWorker entry(FleetSnapshot s, RollcallWorker w) {
        return state(s, w).orElseThrow(() -> new AssertionError(w.endpoint().url() + " not in snapshot " + s.getNumber()));
    }

    private static Optional<FleetWorker> state(FleetSnapshot s, RollcallWorker w) {
        return entries(s).stream().filter(e -> e.getUrl().equals(w.endpoint().url())).findFirst();
    }

    private static void awaitState(String what, List<FleetSnapshot> messages, Predicate<FleetSnapshot> condition) {
        await(what).atMost(WAIT).until(() -> {
            FleetSnapshot held = null;
            for (FleetSnapshot m : messages) {
                held = FleetChanges.apply(held, m);
            }
            return held != null && condition.test(held);
        });
    }
}
