package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.it.polyglot.FleetClientProcess.Client;
import dev.rollcall.it.polyglot.FleetClientProcess.Seen;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.FleetWorker;
import dev.rollcall.protocol.v1.FleetWorkerState;
import dev.rollcall.protocol.v1.WatchFleetRequest;
import dev.rollcall.testkit.Closer;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A rolling upgrade under {@code semver ^1.0}, served by {@code rollcall serve} (a process of its own)
 * and followed by the Python and the Node fleet clients (examples/clients), each a real process: both
 * see the snapshots in order, each as the service sent it under its number (a Java WatchFleet in the
 * test is the reference), any gap said on standard error (latest wins), the drained worker gone from
 * the first snapshot that left it out, and the rejected version never listed.
 */
class FleetClientsRollingUpgradeTest {

    private static final Logger log = LoggerFactory.getLogger(FleetClientsRollingUpgradeTest.class);
    private static final Duration WAIT = Duration.ofSeconds(60);

    @AutoClose
    private final Closer closer = new Closer();
    @TempDir
    Path dir;
    /** What the test's own WatchFleet received: number to the compatible workers (URL to version). */
    private final NavigableMap<Long, Map<String, String>> sent = new ConcurrentSkipListMap<>();
    /** The URLs the service reported REJECTED, in any snapshot. */
    private final Map<String, String> rejected = new ConcurrentHashMap<>();

    private void watchFromJava(RollcallServeProcess serve) {
        ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", serve.grpcAddress().getPort())
                .usePlaintext().build();
        closer.add(channel::shutdownNow);
        FleetServiceGrpc.newStub(channel).watchFleet(WatchFleetRequest.getDefaultInstance(), new StreamObserver<>() {
            @Override
            public void onNext(FleetSnapshot s) {
                Map<String, String> m = new TreeMap<>();
                for (FleetWorker w : s.getWorkersList()) {
                    m.put(w.getUrl(), w.getVersion());
                }
                for (FleetWorker w : s.getExcludedList()) {
                    if (w.getState() == FleetWorkerState.FLEET_WORKER_STATE_REJECTED) {
                        rejected.put(w.getUrl(), w.getVersion());
                    }
                }
                sent.put(s.getNumber(), m);
            }

            @Override
            public void onError(Throwable t) {
                log.info("the test's WatchFleet ended: {}", t.toString());
            }

            @Override
            public void onCompleted() {
            }
        });
    }

    /** The lowest number above {@code after} that the service sent with compatible workers matching {@code condition}. */
    private long awaitSent(long after, Predicate<Map<String, String>> condition) {
        return await().atMost(WAIT).until(() -> sent.tailMap(after, false).entrySet().stream()
                .filter(e -> condition.test(e.getValue())).map(Map.Entry::getKey).findFirst().orElse(-1L), n -> n > 0);
    }

    private static void awaitEach(List<FleetClientProcess> clients, Predicate<Seen> snapshot) {
        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.saw(snapshot)).as("%s", c.transcript()).isTrue());
        }
    }

    @Test
    void pythonAndNodeSeeEverySnapshotInOrderTheDrainedWorkerGoneAtOnceAndTheRejectedVersionNever() throws Exception {
        WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0", "1.0.0", "1.0.0"));
        Path workers = Files.write(dir.resolve("workers.txt"), fleet.endpoints().stream().map(WorkerEndpoint::url).toList());
        RollcallServeProcess serve = closer.add(RollcallServeProcess.start(dir.resolve("rollcall.properties"),
                List.of("rollcall.discovery.type=static", "rollcall.discovery.static.file=" + workers,
                        "rollcall.policy.type=semver", "rollcall.policy.semver.range=^1.0"), 0));
        watchFromJava(serve);
        long all = awaitSent(0, s -> s.size() == 3);
        FleetClientProcess python = closer.add(FleetClientProcess.watch(Client.PYTHON, serve.grpcAddress()));
        FleetClientProcess node = closer.add(FleetClientProcess.watch(Client.NODE, serve.grpcAddress()));
        List<FleetClientProcess> clients = List.of(python, node);
        awaitEach(clients, s -> s.number() >= all);

        String first = fleet.worker(0).endpoint().url();
        String second = fleet.worker(1).endpoint().url();
        String third = fleet.worker(2).endpoint().url();
        fleet.worker(0).restart("1.1.0");
        long upgraded = awaitSent(all, s -> "1.1.0".equals(s.get(first)));
        awaitEach(clients, s -> s.number() >= upgraded);

        fleet.worker(1).restart("2.0.0"); // outside ^1.0: rejected, never to be listed
        await().atMost(WAIT).until(() -> "2.0.0".equals(rejected.get(second)));
        long afterRejection = sent.lastKey();
        awaitEach(clients, s -> s.number() >= afterRejection);

        fleet.worker(2).drain();
        long drained = awaitSent(afterRejection, s -> !s.containsKey(third));
        awaitEach(clients, s -> s.number() >= drained);

        fleet.worker(1).restart("1.1.0");
        fleet.worker(2).restart("1.1.0");
        Map<String, String> upgradedFleet = Map.of(first, "1.1.0", second, "1.1.0", third, "1.1.0");
        long done = awaitSent(drained, upgradedFleet::equals);
        awaitEach(clients, s -> s.number() >= done);

        String instance = python.seen().get(0).instance();
        for (FleetClientProcess c : clients) {
            List<Seen> seen = c.seen();
            String transcript = c.transcript();
            assertThat(seen).as("one service instance: %s", transcript)
                    .allSatisfy(s -> assertThat(s.instance()).isEqualTo(instance));
            int gaps = 0;
            for (int i = 1; i < seen.size(); i++) {
                long before = seen.get(i - 1).number();
                long now = seen.get(i).number();
                assertThat(now).as("snapshot %s after %s, in order: %s", now, before, transcript).isGreaterThan(before);
                if (now > before + 1) {
                    gaps++;
                    long skipped = now - before - 1;
                    assertThat(c.saidOnStderr(l -> l.equals("watch: skipped " + skipped + " snapshots (latest wins)")))
                            .as("a jump from %s to %s is said: %s", before, now, transcript).isTrue();
                }
            }
            for (Seen s : seen) {
                Map<String, String> reference = sent.get(s.number());
                if (reference != null) { // the test's own stream may have skipped one (latest wins)
                    assertThat(s.compatible()).as("snapshot %s as the service sent it: %s", s.number(), transcript)
                            .isEqualTo(reference);
                }
                assertThat(s.compatible()).as("the rejected version, never listed: %s", transcript)
                        .doesNotContainValue("2.0.0");
                if (s.number() >= drained) { // its 1.0.0 process drained; a 1.1.0 one came back on its port
                    assertThat(s.compatible().get(third)).as("the drained worker, gone from snapshot %s on: %s",
                            drained, transcript).isNotEqualTo("1.0.0");
                }
            }
            assertThat(c.last().compatible()).as("the last snapshot: %s", transcript).isEqualTo(upgradedFleet);
            log.info("MEASURED {}: {} snapshots seen of {} sent ({} .. {}), {} gaps", c, seen.size(),
                    done - seen.get(0).number() + 1, seen.get(0).number(), done, gaps);
        }
    }
}
