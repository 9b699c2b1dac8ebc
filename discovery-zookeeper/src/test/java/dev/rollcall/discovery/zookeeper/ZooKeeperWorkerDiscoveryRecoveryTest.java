package dev.rollcall.discovery.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.testkit.zookeeper.ZooKeeperServer;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * ZooKeeper stops and restarts, or the discovery's session expires for real: the last set is kept,
 * marked stale, and every change made meanwhile is applied once it is back.
 */
class ZooKeeperWorkerDiscoveryRecoveryTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String PATH = "/rollcall/workers";

    private ZooKeeperServer server;
    private ZooKeeper zk;
    private ZooKeeperWorkerDiscovery discovery;
    private final CandidateRecorder listener = new CandidateRecorder();

    @BeforeEach
    void startZooKeeper() {
        server = ZooKeeperServer.start();
        zk = new ZooKeeper(server);
    }

    @AfterEach
    void stopAll() {
        if (discovery != null) {
            discovery.close();
        }
        zk.close();
        server.close();
    }

    private void startDiscovery() {
        discovery = (ZooKeeperWorkerDiscovery) new ZooKeeperWorkerDiscoveryProvider().create(ZooKeeper.settings(Map.of(
                "connect", server.connectString(), "path", PATH, "session-timeout", "4s",
                "connection-timeout", "1s", "backoff.initial", "100ms", "backoff.max", "1s")));
        discovery.start(listener);
    }

    private void awaitLatest(Set<WorkerEndpoint> expected) {
        await().atMost(WAIT).untilAsserted(() -> assertThat(listener.latest()).isEqualTo(expected));
    }

    @Test
    void keepsTheLastSetStaleWhileZooKeeperIsDownAndAppliesEveryChangeMadeAfterItReturns() {
        zk.put(PATH + "/w1", "grpc://127.0.0.1:7001");
        zk.put(PATH + "/w2", "grpc://127.0.0.2:7002");
        startDiscovery();
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7001), WorkerEndpoint.of("127.0.0.2", 7002)));

        server.stop();
        await().atMost(WAIT).until(listener::stale);
        assertThat(listener.errors().get(0)).hasMessageContaining(server.connectString());
        int sets = listener.sets().size();

        server.restart();
        zk.delete(PATH + "/w1");
        zk.put(PATH + "/w2", "grpc://127.0.0.2:7012");
        zk.put(PATH + "/w3", "grpc://127.0.0.3:7003");

        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.2", 7012), WorkerEndpoint.of("127.0.0.3", 7003)));
        assertThat(listener.stale()).isFalse();
        assertThat(listener.sets().subList(0, sets)).as("no empty set was published during the outage")
                .doesNotContain(Set.of());
    }

    /** The server ends the discovery's session: a new session, a new watch, everything read again. */
    @Test
    void readsEverythingAgainAndWatchesAnewAfterItsSessionExpires() {
        zk.put(PATH + "/w1", "grpc://127.0.0.1:7001");
        startDiscovery();
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7001)));
        long session = discovery.zooKeeperSession();
        assertThat(session).isNotZero();
        long fullReads = discovery.fullReads();

        server.expireSession(session);
        zk.put(PATH + "/w2", "grpc://127.0.0.2:7002");

        await().atMost(WAIT).until(() -> discovery.zooKeeperSession() != session && discovery.watchesAdded() == 2);
        assertThat(discovery.fullReads()).isGreaterThan(fullReads);
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7001), WorkerEndpoint.of("127.0.0.2", 7002)));

        zk.put(PATH + "/w3", "grpc://127.0.0.3:7003");   // seen through the new session's watch
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7001), WorkerEndpoint.of("127.0.0.2", 7002),
                WorkerEndpoint.of("127.0.0.3", 7003)));
        assertThat(listener.stale()).isFalse();
    }
}
