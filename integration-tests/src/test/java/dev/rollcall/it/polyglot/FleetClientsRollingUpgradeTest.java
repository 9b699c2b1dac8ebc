package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.polyglot.FleetClientProcess.Client;
import dev.rollcall.it.polyglot.FleetClientProcess.Seen;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.server.FleetServer;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A rolling upgrade under {@code semver ^1.0}, followed through a {@link FleetServer} by the Python
 * and the Node fleet clients (examples/clients), each a real process: both see the snapshots in
 * order, each one the resolver published under its number, any gap said on standard error (latest
 * wins), the drained worker gone from the first snapshot that left it out, and the rejected version
 * never listed.
 */
class FleetClientsRollingUpgradeTest {

    private static final Logger log = LoggerFactory.getLogger(FleetClientsRollingUpgradeTest.class);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @AutoClose
    private final Closer closer = new Closer();

    private static Map<String, String> compatible(FleetSnapshot s) {
        Map<String, String> m = new TreeMap<>();
        for (WorkerInfo w : s.workers()) {
            m.put(w.endpoint().url(), w.version());
        }
        return m;
    }

    private static void awaitEach(List<FleetClientProcess> clients, Predicate<Seen> snapshot) {
        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.saw(snapshot)).as("%s", c.transcript()).isTrue());
        }
    }

    @Test
    void pythonAndNodeSeeEverySnapshotInOrderTheDrainedWorkerGoneAtOnceAndTheRejectedVersionNever() throws Exception {
        WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0", "1.0.0", "1.0.0"));
        PushDiscovery discovery = new PushDiscovery();
        discovery.push(fleet.endpoints());
        WorkerResolver resolver = closer.add(WorkerResolver.builder().name("serve-rolling").discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0")).fetchSchemas(false).build());
        Map<Long, Map<String, String>> published = new ConcurrentHashMap<>();
        closer.add(resolver.addListener(s -> published.put(s.number(), compatible(s))));
        resolver.awaitWorkers(3, WAIT);
        FleetServer server = closer.add(FleetServer.builder(resolver).host("127.0.0.1").port(0).http(false).start());
        FleetClientProcess python = closer.add(FleetClientProcess.watch(Client.PYTHON, server.grpcAddress()));
        FleetClientProcess node = closer.add(FleetClientProcess.watch(Client.NODE, server.grpcAddress()));
        List<FleetClientProcess> clients = List.of(python, node);
        awaitEach(clients, s -> s.compatible().size() == 3);

        WorkerEndpoint first = fleet.worker(0).endpoint();
        WorkerEndpoint second = fleet.worker(1).endpoint();
        WorkerEndpoint third = fleet.worker(2).endpoint();
        fleet.worker(0).restart("1.1.0");
        long upgraded = resolver.await(s -> "1.1.0".equals(compatible(s).get(first.url())), WAIT).number();
        awaitEach(clients, s -> s.number() >= upgraded);

        fleet.worker(1).restart("2.0.0"); // outside ^1.0: rejected, never to be listed
        long rejected = resolver.await(s -> s.status(second.url()).map(st -> st.state() == State.REJECTED)
                .orElse(false), WAIT).number();
        awaitEach(clients, s -> s.number() >= rejected);

        fleet.worker(2).drain();
        long drained = resolver.await(s -> !compatible(s).containsKey(third.url()), WAIT).number();
        awaitEach(clients, s -> s.number() >= drained);

        fleet.worker(1).restart("1.1.0");
        fleet.worker(2).restart("1.1.0");
        Map<String, String> upgradedFleet = Map.of(first.url(), "1.1.0", second.url(), "1.1.0", third.url(), "1.1.0");
        long done = resolver.await(s -> compatible(s).equals(upgradedFleet), WAIT).number();
        awaitEach(clients, s -> s.number() >= done);

        for (FleetClientProcess c : clients) {
            List<Seen> seen = c.seen();
            String transcript = c.transcript();
            assertThat(seen).as("one service instance: %s", transcript)
                    .allSatisfy(s -> assertThat(s.instance()).isEqualTo(server.instanceId()));
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
                Map<String, String> truth = published.get(s.number());
                if (truth != null) { // the test's own listener may have skipped one (latest wins)
                    assertThat(s.compatible()).as("snapshot %s as the resolver published it: %s", s.number(), transcript)
                            .isEqualTo(truth);
                }
                assertThat(s.compatible()).as("the rejected version, never listed: %s", transcript)
                        .doesNotContainValue("2.0.0");
                if (s.number() >= drained) { // its 1.0.0 process drained; a 1.1.0 one came back on its port
                    assertThat(s.compatible().get(third.url())).as("the drained worker, gone from snapshot %s on: %s",
                            drained, transcript).isNotEqualTo("1.0.0");
                }
            }
            assertThat(c.last().compatible()).as("the last snapshot: %s", transcript).isEqualTo(upgradedFleet);
            log.info("MEASURED {}: {} snapshots seen of {} published ({} .. {}), {} gaps", c, seen.size(),
                    done - seen.get(0).number() + 1, seen.get(0).number(), done, gaps);
        }
    }
}
