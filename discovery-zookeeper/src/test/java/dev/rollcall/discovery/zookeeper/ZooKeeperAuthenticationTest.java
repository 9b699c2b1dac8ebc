package dev.rollcall.discovery.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.testkit.zookeeper.ZooKeeperServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Workers under a path only a digest user may read: the right credentials read it, wrong ones fail without showing the password. */
class ZooKeeperAuthenticationTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String PATH = "/secure/workers";
    private static final String PASSWORD = "s3cret-do-not-print";

    private static ZooKeeperServer server;

    @BeforeAll
    static void startZooKeeperWithAProtectedPath() throws Exception {
        server = ZooKeeperServer.start();
        List<ACL> onlyRollcall = List.of(new ACL(ZooDefs.Perms.ALL,
                new Id("digest", DigestAuthenticationProvider.generateDigest("rollcall:" + PASSWORD))));
        try (ZooKeeper admin = new ZooKeeper(CuratorFrameworkFactory.builder().connectString(server.connectString())
                .authorization("digest", ("rollcall:" + PASSWORD).getBytes(StandardCharsets.UTF_8))
                .retryPolicy(new RetryOneTime(100)))) {
            admin.curator().create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).withACL(onlyRollcall)
                    .forPath(PATH + "/w1", "grpc://127.0.0.1:7001".getBytes(StandardCharsets.UTF_8));
        }
    }

    @AfterAll
    static void stopZooKeeper() {
        if (server != null) {
            server.close();
        }
    }

    private static ZooKeeperWorkerDiscovery discovery(String password) {
        return (ZooKeeperWorkerDiscovery) new ZooKeeperWorkerDiscoveryProvider().create(ZooKeeper.settings(Map.of(
                "connect", server.connectString(), "path", PATH, "user", "rollcall", "password", password,
                "connection-timeout", "1s", "backoff.initial", "100ms", "backoff.max", "500ms")));
    }

    @Test
    void readsAProtectedPathWithTheRightCredentials() {
        CandidateRecorder listener = new CandidateRecorder();
        try (ZooKeeperWorkerDiscovery discovery = discovery(PASSWORD)) {
            discovery.start(listener);
            await().atMost(WAIT).untilAsserted(() -> assertThat(listener.latest())
                    .isEqualTo(Set.of(WorkerEndpoint.of("127.0.0.1", 7001))));
            assertThat(discovery.description()).doesNotContain(PASSWORD);
        }
    }

    @Test
    void wrongCredentialsAreAnErrorThatDoesNotShowThePassword() {
        String wrong = "wrong-password-do-not-print";
        CandidateRecorder listener = new CandidateRecorder();
        try (ZooKeeperWorkerDiscovery discovery = discovery(wrong)) {
            discovery.start(listener);
            await().atMost(WAIT).until(() -> !listener.errors().isEmpty());
            assertThat(listener.sets()).isEmpty();
            assertThat(listener.errors().get(0)).hasMessageContaining("NOAUTH").hasMessageContaining(PATH)
                    .hasMessageNotContaining(wrong);
            assertThat(discovery.description()).doesNotContain(wrong);
        }
    }
}
