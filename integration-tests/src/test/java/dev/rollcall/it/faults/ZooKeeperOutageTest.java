package dev.rollcall.it.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.zookeeper.ZooKeeperServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The zookeeper backend down for a while and back: a real ZooKeeper server stopped and restarted
 * under a resolver configured as a user would configure it. Meanwhile the last set is served and
 * marked stale; afterwards every change made after the recovery arrives.
 */
class ZooKeeperOutageTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String PATH = "/rollcall/workers";

    private ZooKeeperServer zk;
    private WorkerFleet fleet;
    private WorkerResolver resolver;

    @BeforeEach
    void start() {
        zk = ZooKeeperServer.start();
        fleet = WorkerFleet.start("1.0.0", "1.0.0", "1.0.0");
    }

    @AfterEach
    void stop() {
        if (resolver != null) {
            resolver.close();
        }
        fleet.close();
        zk.close();
    }

    /** Writes through a client of the test's own, not the code under test. */
    private void write(Map<String, WorkerEndpoint> puts, Set<String> deletes) throws Exception {
        try (CuratorFramework client = CuratorFrameworkFactory.newClient(zk.connectString(), 10_000, 10_000,
                new RetryOneTime(200))) {
            client.start();
            for (Map.Entry<String, WorkerEndpoint> e : puts.entrySet()) {
                client.create().orSetData().creatingParentsIfNeeded()
                        .forPath(PATH + "/" + e.getKey(), e.getValue().url().getBytes(StandardCharsets.UTF_8));
            }
            for (String id : deletes) {
                client.delete().forPath(PATH + "/" + id);
            }
        }
    }

    private static Set<String> urls(Iterable<WorkerEndpoint> endpoints) {
        Set<String> s = new TreeSet<>();
        endpoints.forEach(e -> s.add(e.url()));
        return s;
    }

    private WorkerEndpoint w(int i) {
        return fleet.worker(i).endpoint();
    }

    @Test
    void servesTheLastSetMarkedStaleWhileZooKeeperIsDownAndAppliesEveryChangeMadeAfterItReturns() throws Exception {
        write(Map.of("w0", w(0), "w1", w(1), "w2", w(2)), Set.of());
        resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "zookeeper",
                "rollcall.discovery.zookeeper.connect", zk.connectString(),
                "rollcall.discovery.zookeeper.path", PATH,
                "rollcall.discovery.zookeeper.connection-timeout", "1s",
                "rollcall.discovery.zookeeper.backoff.initial", "200ms",
                "rollcall.discovery.zookeeper.backoff.max", "1s",
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0",
                "rollcall.probe.backoff.initial", "100ms",
                "rollcall.probe.backoff.max", "1s")));
        FleetSnapshot before = resolver.awaitWorkers(3, WAIT);
        assertThat(before.staleSince()).isEmpty();

        zk.stop();

        FleetSnapshot stale = resolver.await(s -> s.staleSince().isPresent(), WAIT);
        assertThat(urls(stale.compatibleEndpoints())).isEqualTo(urls(fleet.endpoints()));
        // Probing goes on meanwhile: a worker that dies during the outage is still left out.
        fleet.worker(2).stop();
        FleetSnapshot staleAndProbed = resolver.await(
                s -> s.status(w(2).url()).map(st -> st.state() != State.COMPATIBLE).orElse(false), WAIT);
        assertThat(staleAndProbed.staleSince()).isPresent();

        zk.restart();
        WorkerEndpoint joined = fleet.addWorker("1.1.0").endpoint();
        write(Map.of("w3", joined), Set.of("w0", "w2"));

        FleetSnapshot after = resolver.await(s -> s.staleSince().isEmpty()
                && s.counts().candidates() == 2 && s.counts().compatible() == 2, WAIT);
        assertThat(urls(after.compatibleEndpoints())).isEqualTo(urls(List.of(w(1), joined)));
        assertThat(after.status(w(0).url())).isEmpty();
        assertThat(after.status(w(2).url())).isEmpty();
        assertThat(after.version(joined.url())).contains("1.1.0");
    }
}
