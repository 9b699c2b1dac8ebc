package dev.rollcall.server;

import static dev.rollcall.server.ServedFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.FleetWorker;
import dev.rollcall.protocol.v1.FleetWorkerState;
import dev.rollcall.protocol.v1.GetFleetRequest;
import dev.rollcall.protocol.v1.WatchFleetRequest;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.NettyChannelBuilder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * WatchFleet with {@code changes_only}: a client that applies every message as fleet.proto says
 * holds, after each, exactly the snapshot a plain watcher is sent whole for that number; a change
 * message carries only the workers that changed; a stream starts whole; a client that stops reading
 * is sent, when it reads again, only messages it can apply; a plain watcher is sent whole snapshots.
 */
class WatchFleetChangesTest {

    private static final WatchFleetRequest CHANGES_ONLY = WatchFleetRequest.newBuilder().setChangesOnly(true).build();

    @Test
    void aChangesOnlyWatcherAppliesEachMessageAndHoldsTheWholeSnapshotAPlainWatcherIsSentForThatNumber()
            throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            RollcallWorker b = fleet.worker("1.0.1");
            RollcallWorker old = fleet.worker("0.9.0");
            fleet.list(a);
            fleet.resolver.awaitWorkers(1, WAIT);
            List<FleetSnapshot> plain = new CopyOnWriteArrayList<>();
            List<FleetSnapshot> changes = new CopyOnWriteArrayList<>();
            FleetServiceGrpc.newStub(fleet.channel()).watchFleet(WatchFleetRequest.getDefaultInstance(),
                    FleetSnapshotsOverGrpcTest.collect(plain));
            FleetServiceGrpc.newStub(fleet.channel()).watchFleet(CHANGES_ONLY,
                    FleetSnapshotsOverGrpcTest.collect(changes));
            await().atMost(WAIT).until(() -> !plain.isEmpty() && !changes.isEmpty());
            String aUrl = a.endpoint().url();
            String bUrl = b.endpoint().url();
            String oldUrl = old.endpoint().url();

            fleet.list(a, b);
            awaitState("b added", changes, s -> state(s.getWorkersList(), bUrl).isPresent());
            fleet.list(a, b, old);
            awaitState("0.9.0 rejected", changes, s -> state(s.getExcludedList(), oldUrl)
                    .filter(w -> w.getState() == FleetWorkerState.FLEET_WORKER_STATE_REJECTED).isPresent());
            a.labels(Map.of("rack", "r2"));
            awaitState("a relabelled", changes, s -> state(s.getWorkersList(), aUrl)
                    .filter(w -> "r2".equals(w.getLabelsOrDefault("rack", ""))).isPresent());
            b.drain();
            awaitState("b draining, excluded", changes, s -> state(s.getExcludedList(), bUrl)
                    .filter(w -> w.getState() == FleetWorkerState.FLEET_WORKER_STATE_DRAINING).isPresent());
            fleet.list(a, old);
            awaitState("b removed", changes, s -> state(s.getWorkersList(), bUrl).isEmpty()
                    && state(s.getExcludedList(), bUrl).isEmpty());
            long newest = fleet.resolver.pin().number();
            await().atMost(WAIT).until(() -> FleetSnapshotsOverGrpcTest.last(plain).getNumber() == newest
                    && FleetSnapshotsOverGrpcTest.last(changes).getNumber() == newest);

            Map<Long, FleetSnapshot> whole = new HashMap<>();
            for (FleetSnapshot s : plain) {
                assertThat(s.getBaseNumber()).as("a plain watcher's message %d", s.getNumber()).isZero();
                assertThat(s.getRemovedUrlsList()).isEmpty();
                whole.put(s.getNumber(), s);
            }
            assertThat(changes.get(0).getBaseNumber()).as("the first message").isZero();
            List<FleetSnapshot> states = states(changes);
            for (FleetSnapshot s : states) {
                assertThat(whole).as("the plain watcher was sent %d too", s.getNumber()).containsKey(s.getNumber());
                assertThat(FleetChanges.byUrl(s)).as("state after message %d", s.getNumber())
                        .isEqualTo(FleetChanges.byUrl(whole.get(s.getNumber())));
            }
            List<FleetSnapshot> changeMessages = changes.stream().filter(m -> m.getBaseNumber() > 0).toList();
            assertThat(changeMessages).as("change messages among %d", changes.size()).isNotEmpty();
            for (FleetSnapshot m : changeMessages) {
                assertThat(m.getBaseNumber()).isEqualTo(m.getNumber() - 1);
                FleetSnapshot base = whole.get(m.getBaseNumber());
                for (FleetWorker w : entries(m).toList()) {
                    assertThat(entries(base).filter(e -> e.getUrl().equals(w.getUrl())).findFirst())
                            .as("message %d carries %s, which changed", m.getNumber(), w.getUrl())
                            .isNotEqualTo(Optional.of(w));
                }
            }
            assertThat(changeMessages).as("b's removal").anySatisfy(m -> assertThat(m.getRemovedUrlsList())
                    .containsExactly(bUrl));
            assertThat(changeMessages).as("the rejected worker's arrival").anySatisfy(m ->
                    assertThat(m.getExcludedList()).extracting(FleetWorker::getUrl).contains(oldUrl));
        }
    }

    @Test
    void aChangesOnlyStreamOpenedAfterManyPublishesStartsWithTheWholeCurrentSnapshot() throws Exception {
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            RollcallWorker b = fleet.worker("1.0.1");
            fleet.list(a, b);
            fleet.resolver.awaitWorkers(2, WAIT);
            a.labels(Map.of("rack", "r2"));
            fleet.resolver.await(s -> s.workers().stream().anyMatch(w -> "r2".equals(w.labels().get("rack"))), WAIT);
            FleetSnapshot current = fleet.blocking().getFleet(GetFleetRequest.getDefaultInstance());
            assertThat(current.getNumber()).isGreaterThan(1);

            List<FleetSnapshot> changes = new CopyOnWriteArrayList<>();
            FleetServiceGrpc.newStub(fleet.channel()).watchFleet(CHANGES_ONLY,
                    FleetSnapshotsOverGrpcTest.collect(changes));
            await().atMost(WAIT).until(() -> !changes.isEmpty());

            FleetSnapshot first = changes.get(0);
            assertThat(first.getBaseNumber()).isZero();
            assertThat(first.getNumber()).isGreaterThanOrEqualTo(current.getNumber());
            assertThat(first.getWorkersList()).extracting(FleetWorker::getUrl)
                    .contains(a.endpoint().url(), b.endpoint().url());
        }
    }

    @Test
    void aChangesOnlyWatcherThatStopsReadingIsSentOnlyMessagesItCanApplyAndEndsOnTheNewestSnapshot()
            throws Exception {
        int changesMade = 60;
        try (ServedFleet fleet = ServedFleet.start()) {
            RollcallWorker w = fleet.worker("1.0.0");
            RollcallWorker steady = fleet.worker("1.0.1");
            fleet.discovery.push(List.of(PaddedLabels.labelled(w, 0), steady.endpoint()));
            fleet.resolver.awaitWorkers(2, WAIT);

            ManagedChannel stuckChannel = NettyChannelBuilder.forAddress(fleet.server.grpcAddress()).usePlaintext()
                    .flowControlWindow(65_535).build(); // a fixed window: no auto-tuning to absorb the flood
            List<FleetSnapshot> stuck = new CopyOnWriteArrayList<>();
            ClientCall<WatchFleetRequest, FleetSnapshot> stuckCall = stuckChannel.newCall(
                    FleetServiceGrpc.getWatchFleetMethod(), CallOptions.DEFAULT);
            try {
                stuckCall.start(new ClientCall.Listener<>() {
                    @Override
                    public void onMessage(FleetSnapshot message) {
                        stuck.add(message);
                    }
                }, new Metadata());
                stuckCall.request(1); // and never again, until the end
                stuckCall.sendMessage(CHANGES_ONLY);
                stuckCall.halfClose();
                await().atMost(WAIT).until(() -> stuck.size() == 1);

                for (int rev = 1; rev <= changesMade; rev++) {
                    fleet.discovery.push(List.of(PaddedLabels.labelled(w, rev), steady.endpoint()));
                    String expected = Integer.toString(rev);
                    fleet.resolver.await(s -> s.workers().stream()
                            .anyMatch(x -> expected.equals(x.endpoint().labels().get("rev"))), WAIT);
                }
                assertThat(fleet.meters.get("rollcall.serve.skipped").functionCounter().count())
                        .as("snapshots superseded before the stuck watcher could take them").isPositive();
                long newest = fleet.resolver.pin().number();

                stuckCall.request(Integer.MAX_VALUE);
                await().atMost(WAIT).until(() -> FleetSnapshotsOverGrpcTest.last(stuck).getNumber() == newest);

                List<FleetSnapshot> states = states(stuck); // fails on a change message whose base it lacks
                FleetSnapshot got = FleetChanges.byUrl(states.get(states.size() - 1));
                assertThat(got).isEqualTo(FleetChanges.byUrl(fleet.blocking()
                        .getFleet(GetFleetRequest.getDefaultInstance())));
                boolean skipped = false;
                for (int i = 1; i < stuck.size(); i++) {
                    FleetSnapshot m = stuck.get(i);
                    if (m.getNumber() > stuck.get(i - 1).getNumber() + 1) {
                        skipped = true;
                        assertThat(m.getBaseNumber()).as("message %d, after a skip", m.getNumber()).isZero();
                    }
                }
                assertThat(skipped).as("the stuck watcher skipped snapshots: %s",
                        stuck.stream().map(FleetSnapshot::getNumber).toList()).isTrue();
            } finally {
                stuckCall.cancel("test over", null);
                stuckChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    /** The state after each message, applied in order as a client does. */
    private static List<FleetSnapshot> states(List<FleetSnapshot> messages) {
        List<FleetSnapshot> states = new ArrayList<>();
        FleetSnapshot held = null;
        for (FleetSnapshot m : messages) {
            held = FleetChanges.apply(held, m);
            states.add(held);
        }
        return states;
    }

    private static void awaitState(String what, List<FleetSnapshot> messages, Predicate<FleetSnapshot> condition) {
        await(what).atMost(WAIT).until(() -> {
            List<FleetSnapshot> states = states(messages);
            return !states.isEmpty() && condition.test(states.get(states.size() - 1));
        });
    }

    private static Optional<FleetWorker> state(List<FleetWorker> list, String url) {
        return list.stream().filter(w -> w.getUrl().equals(url)).findFirst();
    }

    private static Stream<FleetWorker> entries(FleetSnapshot s) {
        return Stream.concat(s.getWorkersList().stream(), s.getExcludedList().stream());
    }

    /** Labels big enough that a few snapshots fill a stalled client's window, as SlowWatcherTest's. */
    private static final class PaddedLabels {
        private static final int PAD_LABELS = 30;

        static WorkerEndpoint labelled(RollcallWorker w, int rev) {
            Map<String, String> labels = new HashMap<>();
            labels.put("rev", Integer.toString(rev));
            for (int i = 0; i < PAD_LABELS; i++) {
                labels.put("pad-" + i, Integer.toString(rev).repeat(1000 / Integer.toString(rev).length()));
            }
            return new WorkerEndpoint("127.0.0.1", w.endpoint().port(), false, labels);
        }
    }
}
