package dev.rollcall.discovery.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.testkit.ConsoleCapture;
import dev.rollcall.testkit.zookeeper.ZooKeeperServer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** The watch against a real ZooKeeper: what it publishes as nodes come, change and go. */
class ZooKeeperWorkerDiscoveryTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static ZooKeeperServer server;
    private static ZooKeeper zk;

    private String path;
    private ZooKeeperWorkerDiscovery discovery;
    private final CandidateRecorder listener = new CandidateRecorder();

    @BeforeAll
    static void startZooKeeper() {
        server = ZooKeeperServer.start();
        zk = new ZooKeeper(server);
    }

    @AfterAll
    static void stopZooKeeper() {
        if (zk != null) {
            zk.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void pathPerTest(TestInfo test) {
        path = "/test/" + test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void closeDiscovery() {
        if (discovery != null) {
            discovery.close();
        }
    }

    private ZooKeeperWorkerDiscovery start(Map<String, String> extra) {
        Map<String, String> keys = new LinkedHashMap<>(Map.of("connect", server.connectString(), "path", path,
                "session-timeout", "5s", "connection-timeout", "2s"));
        keys.putAll(extra);
        discovery = (ZooKeeperWorkerDiscovery) new ZooKeeperWorkerDiscoveryProvider().create(ZooKeeper.settings(keys));
        discovery.start(listener);
        return discovery;
    }

    private void awaitLatest(Set<WorkerEndpoint> expected) {
        await().atMost(WAIT).untilAsserted(() -> assertThat(listener.latest()).isEqualTo(expected));
    }

    @Test
    void publishesTheChildrenAlreadyThereAtStartInEveryForm() {
        zk.put(path + "/w1", "grpc://127.0.0.1:7001");
        zk.put(path + "/w2", "{\"endpoint\":\"grpcs://127.0.0.2:7002\",\"labels\":{\"zone\":\"eu-1\"}}");
        zk.put(path + "/w3", "{\"name\":\"x\",\"id\":\"w3\",\"address\":\"127.0.0.3\",\"port\":7003,\"sslPort\":null,"
                + "\"payload\":{\"labels\":{\"zone\":\"eu-2\"}}}");
        zk.put(path + "-other/w4", "grpc://127.0.0.4:7004");
        zk.put(path + "/w1/below", "grpc://127.0.0.5:7005");

        start(Map.of());

        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7001),
                new WorkerEndpoint("127.0.0.2", 7002, true, Map.of("zone", "eu-1")),
                new WorkerEndpoint("127.0.0.3", 7003, false, Map.of("zone", "eu-2"))));
        assertThat(listener.errors()).isEmpty();
        assertThat(discovery.description()).isEqualTo("zookeeper[" + server.connectString() + ", path=" + path
                + ", 3 workers]");
    }

    @Test
    void publishesTheFullSetAfterEachCreationChangeAndDeletion() {
        zk.put(path + "/w1", "grpc://127.0.0.1:7001");
        start(Map.of());
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7001)));

        zk.put(path + "/w2", "grpc://127.0.0.2:7002");
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7001), WorkerEndpoint.of("127.0.0.2", 7002)));

        zk.put(path + "/w1", "grpc://127.0.0.1:7011");
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7011), WorkerEndpoint.of("127.0.0.2", 7002)));

        zk.delete(path + "/w2");
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7011)));

        zk.put(path + "/w1/child", "grpc://127.0.0.9:7009");   // below a worker's node: not a worker
        zk.put(path + "/w3", "grpc://127.0.0.3:7003");
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7011), WorkerEndpoint.of("127.0.0.3", 7003)));
        assertThat(listener.errors()).isEmpty();
        assertThat(listener.sets()).as("one publish per change").hasSize(5);
    }

    @Test
    void skipsAMalformedNodeAndPublishesTheRest() {
        zk.put(path + "/good", "grpc://127.0.0.1:7001");
        zk.put(path + "/bad", "{\"address\":\"127.0.0.2\"}");
        start(Map.of());
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7001)));

        zk.put(path + "/bad", "grpc://127.0.0.2:7002");   // fixed: now it counts
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7001), WorkerEndpoint.of("127.0.0.2", 7002)));

        zk.put(path + "/bad", "nonsense");                // broken again: it leaves
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7001)));
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void thePayloadsVersionIsTheCandidatesClaimFollowsAChangeAndAHostileOneCostsOnlyItsNode() {
        String instance = "{\"name\":\"workers\",\"id\":\"%s\",\"address\":\"127.0.0.%d\",\"port\":7001,"
                + "\"payload\":{\"labels\":{},\"version\":\"%s\"}}";
        zk.put(path + "/good", instance.formatted("good", 1, "1.4.0"));
        try (ConsoleCapture console = new ConsoleCapture()) {
            zk.put(path + "/forged", instance.formatted("forged", 2, "1.4.0\\u001b[2J"));
            start(Map.of());
            awaitLatest(Set.of(new WorkerEndpoint("127.0.0.1", 7001, false, Map.of(WorkerEndpoint.VERSION_LABEL, "1.4.0"))));
            if (ConsoleCapture.seesLogs()) {
                await().atMost(WAIT).untilAsserted(() -> assertThat(console.text())
                        .contains("skipping ZooKeeper node " + path + "/forged",
                                "\"payload.version\": the version '1.4.0\\u001b[2J'")
                        .doesNotContain("\u001b"));
            }
        }

        zk.put(path + "/good", instance.formatted("good", 1, "1.5.0"));
        awaitLatest(Set.of(new WorkerEndpoint("127.0.0.1", 7001, false, Map.of(WorkerEndpoint.VERSION_LABEL, "1.5.0"))));
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void aPathThatDoesNotExistYetIsAnEmptySetUntilItIsCreated() {
        start(Map.of());
        awaitLatest(Set.of());

        zk.put(path + "/w1", "grpc://127.0.0.1:7001");
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.1", 7001)));

        zk.delete(path);
        awaitLatest(Set.of());
        assertThat(listener.errors()).isEmpty();
    }

    /** A fleet registered by Curator's own ServiceDiscovery, as Druid or Pinot do: found as it is. */
    @Test
    @SuppressWarnings({"rawtypes", "unchecked"}) // Curator's payload type is the raw Map
    void findsAServiceRegisteredWithCuratorsServiceDiscoveryUnchanged() throws Exception {
        try (ZooKeeper other = new ZooKeeper(CuratorFrameworkFactory.builder().connectString(server.connectString())
                .sessionTimeoutMs(10_000).retryPolicy(new RetryOneTime(100)));
             ServiceDiscovery<Map> curator = ServiceDiscoveryBuilder.builder(Map.class).client(other.curator())
                     .basePath(path).build()) {
            curator.start();
            @SuppressWarnings({"rawtypes", "unchecked"})
            ServiceInstance<Map> plain = (ServiceInstance) ServiceInstance.<Map>builder().name("historical")
                    .address("127.0.0.1").port(8083).payload(Map.of("labels", Map.of("tier", "hot"))).build();
            @SuppressWarnings({"rawtypes", "unchecked"})
            ServiceInstance<Map> tls = (ServiceInstance) ServiceInstance.<Map>builder().name("historical")
                    .address("127.0.0.2").sslPort(8283).build();
            curator.registerService(plain);
            curator.registerService(tls);

            start(Map.of("path", path + "/historical"));

            awaitLatest(Set.of(new WorkerEndpoint("127.0.0.1", 8083, false, Map.of("tier", "hot")),
                    new WorkerEndpoint("127.0.0.2", 8283, true, Map.of())));

            curator.unregisterService(plain);
            awaitLatest(Set.of(new WorkerEndpoint("127.0.0.2", 8283, true, Map.of())));
        }
    }
}
