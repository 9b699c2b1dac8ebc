package dev.rollcall.discovery.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.testkit.ConsoleCapture;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.WorkerProcess;
import dev.rollcall.testkit.zookeeper.ZooKeeperServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Workers registering themselves in a real ZooKeeper, and a real resolver watching them: they
 * appear, leave at once on a clean shutdown, vanish when their session ends, and come back by
 * themselves after a session expiry.
 */
class ZooKeeperRegistrationTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static ZooKeeperServer server;
    private static ZooKeeper zk;

    private String path;

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
        path = "/services/" + test.getTestMethod().orElseThrow().getName();
    }

    /** One configuration for both sides, as a deployment would share one file. */
    private RollcallConfig config(String sessionTimeout) {
        Map<String, String> keys = new HashMap<>(Map.of(
                "rollcall.worker.register", "true",
                "rollcall.discovery.type", "zookeeper",
                "rollcall.discovery.zookeeper.connect", server.connectString(),
                "rollcall.discovery.zookeeper.path", path,
                "rollcall.discovery.zookeeper.session-timeout", sessionTimeout,
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0.0"));
        return RollcallConfig.of(keys);
    }

    private static List<String> urls(FleetSnapshot snapshot) {
        return snapshot.workers().stream().map(w -> w.endpoint().url()).toList();
    }

    @Test
    @SuppressWarnings({"rawtypes", "unchecked"}) // Curator's payload type is the raw Map
    void aRegisteredWorkerAppearsInTheResolversSetAndToCuratorsServiceDiscovery() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.0.0").label("zone", "eu-1")
                .config(config("5s")).start();
             WorkerResolver resolver = WorkerResolver.fromConfig(config("5s"))) {

            FleetSnapshot snapshot = resolver.awaitWorkers(1, WAIT);

            assertThat(urls(snapshot)).containsExactly(worker.endpoint().url());
            WorkerStatus status = snapshot.status(worker.endpoint().url()).orElseThrow();
            assertThat(status.endpoint().labels()).as("labels travel through ZooKeeper").containsEntry("zone", "eu-1");
            assertThat(status.endpoint().labels()).as("the version travels as the candidate's claim")
                    .containsEntry(WorkerEndpoint.VERSION_LABEL, "1.0.0");
            String node = path + "/127.0.0.1_" + worker.port();
            assertThat(worker.registration().orElseThrow().description())
                    .isEqualTo("ZooKeeper node " + node + " at " + server.connectString());
            assertThat(zk.stat(node).orElseThrow().getEphemeralOwner()).as("an ephemeral node").isNotZero();

            // Curator's own reader, as a Druid- or Pinot-style consumer would use it.
            String base = path.substring(0, path.lastIndexOf('/'));
            String name = path.substring(path.lastIndexOf('/') + 1);
            try (ServiceDiscovery<Map> curator = ServiceDiscoveryBuilder.builder(Map.class).client(zk.curator())
                    .basePath(base).build()) {
                curator.start();
                Collection<ServiceInstance<Map>> found = curator.queryForInstances(name);
                assertThat(found).singleElement().satisfies(i -> {
                    assertThat(i.getAddress()).isEqualTo("127.0.0.1");
                    assertThat(i.getPort()).isEqualTo(worker.port());
                    assertThat(i.getId()).isEqualTo("127.0.0.1_" + worker.port());
                    assertThat(i.getPayload()).containsEntry("version", "1.0.0")
                            .containsEntry("instanceId", worker.instanceId());
                });
            }
        }
    }

    @Test
    void aCleanShutdownRemovesTheWorkerAtOnce() throws Exception {
        // A long session: if the worker left the set within the wait below, its shutdown removed it, not expiry.
        RollcallConfig config = config("60s");
        RollcallWorker worker = RollcallWorker.builder().version("1.0.0").config(config).start();
        try (WorkerResolver resolver = WorkerResolver.fromConfig(config)) {
            resolver.awaitWorkers(1, WAIT);
            String node = path + "/127.0.0.1_" + worker.port();
            assertThat(zk.stat(node)).isPresent();

            worker.close();

            assertThat(zk.stat(node)).as("deleted before close() returned").isEmpty();
            await().atMost(Duration.ofSeconds(15)).until(() -> resolver.pin().statuses().isEmpty());
        } finally {
            worker.close();
        }
    }

    /**
     * A real worker process killed with SIGKILL: no shutdown hook, no delete, its session's pings
     * simply stop, as when a machine dies. Its node stays until ZooKeeper expires the session.
     */
    @Test
    void aKilledWorkerDisappearsWhenItsSessionTimesOut() throws Exception {
        RollcallConfig config = config("2s");
        try (WorkerProcess child = WorkerProcess.start(config.values(), WAIT);
             WorkerResolver resolver = WorkerResolver.fromConfig(config)) {
            String node = path + "/127.0.0.1_" + child.port();
            assertThat(urls(resolver.awaitWorkers(1, WAIT))).containsExactly(child.url());
            long owner = zk.stat(node).map(Stat::getEphemeralOwner).orElseThrow();

            child.kill();
            assertThat(zk.stat(node).map(Stat::getEphemeralOwner)).as("nothing deleted it: only its session's end can")
                    .contains(owner);

            await().atMost(WAIT).until(() -> zk.stat(node).isEmpty());
            await().atMost(WAIT).until(() -> resolver.pin().statuses().isEmpty());
        }
    }

    @Test
    void createsTheNodeAgainAfterItsSessionExpires() {
        WorkerInfo self = WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 7101), "1.0.0");
        ZooKeeperRegistration registration = (ZooKeeperRegistration) new ZooKeeperRegistrationProvider().create(self,
                ZooKeeper.settings(Map.of("connect", server.connectString(), "path", path, "session-timeout", "3s")));
        try {
            registration.start();
            String node = path + "/127.0.0.1_7101";
            long first = zk.stat(node).map(Stat::getEphemeralOwner).orElseThrow();
            assertThat(registration.sessionId()).isEqualTo(first);

            server.expireSession(first);

            await().atMost(WAIT).until(() -> zk.stat(node).map(Stat::getEphemeralOwner).filter(o -> o != first)
                    .isPresent());
            await().atMost(WAIT).untilAsserted(() -> assertThat(registration.creations()).isEqualTo(2));
            assertThat(WorkerNode.parse(zk.get(node).orElseThrow().getBytes(StandardCharsets.UTF_8)))
                    .contains(WorkerEndpoint.of("127.0.0.1", 7101).withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.0.0")));
        } finally {
            registration.close();
        }
        assertThat(zk.children(path)).isEmpty();
    }

    /**
     * An operator (or a script, or another client) deletes the live worker's ephemeral node: the
     * registration notices and writes it again at once, with a WARN and an INFO naming the node and
     * the worker; after close() the node is gone for good.
     */
    @Test
    void writesItsNodeAgainWhenSomeoneElseDeletesItAndNoLongerOnceClosed() {
        WorkerInfo self = WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 7104), "1.0.0");
        ZooKeeperRegistration registration = (ZooKeeperRegistration) new ZooKeeperRegistrationProvider().create(self,
                ZooKeeper.settings(Map.of("connect", server.connectString(), "path", path, "session-timeout", "10s")));
        String node = path + "/127.0.0.1_7104";
        String log;
        try (ConsoleCapture console = new ConsoleCapture()) {
            registration.start();
            long first = zk.stat(node).map(Stat::getCzxid).orElseThrow();

            zk.delete(node);

            await().atMost(WAIT).until(() -> zk.stat(node).map(Stat::getCzxid).filter(c -> c != first).isPresent());
            await().atMost(WAIT).untilAsserted(() -> assertThat(registration.creations()).isEqualTo(2));
            if (ConsoleCapture.seesLogs()) {
                await().atMost(WAIT).until(() -> console.text().contains("written again"));
            }
            log = console.text();
        } finally {
            registration.close();
        }
        if (ConsoleCapture.seesLogs()) {
            assertThat(log.lines().filter(l -> l.contains(" WARN ") && l.contains(node)
                    && l.contains("grpc://127.0.0.1:7104") && l.contains("deleted"))).hasSize(1);
            assertThat(log.lines().filter(l -> l.contains(" INFO ") && l.contains(node)
                    && l.contains("grpc://127.0.0.1:7104") && l.contains("written again"))).hasSize(1);
        }
        assertThat(zk.stat(node)).as("removed by close()").isEmpty();
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> zk.stat(node).isEmpty());
    }

    @Test
    void failsWithARegistrationExceptionWithoutSecretsWhenZooKeeperIsUnreachable() {
        String nowhere = "127.0.0.1:" + WorkerFleet.freeEndpoint().port();
        String password = "hunter2-do-not-print";
        WorkerInfo self = WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 7103), "1.0.0");
        WorkerRegistration registration = new ZooKeeperRegistrationProvider().create(self, ZooKeeper.settings(Map.of(
                "connect", nowhere, "path", path, "user", "rollcall", "password", password,
                "connection-timeout", "500ms", "backoff.initial", "100ms")));

        assertThatThrownBy(registration::start)
                .isInstanceOf(RegistrationException.class)
                .hasMessageContaining("grpc://127.0.0.1:7103")
                .hasMessageContaining(path + "/127.0.0.1_7103")
                .hasMessageContaining(nowhere)
                .satisfies(e -> assertThat(stackTrace(e)).doesNotContain(password));
        assertThat(registration.description()).doesNotContain(password);
        registration.close();
    }

    @Test
    void aTypoInARegistrationKeyFailsTheWorkerBeforeAnythingIsRegistered() {
        RollcallConfig config = config("3s").with("rollcall.discovery.zookeeper.registration.idd", "w1");

        assertThatThrownBy(() -> RollcallWorker.builder().version("1.0.0").config(config).start())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.zookeeper.registration.idd")
                .hasMessageContaining("rollcall.discovery.zookeeper.registration.id");
        assertThat(zk.children(path)).isEmpty();
    }

    private static String stackTrace(Throwable e) {
        StringWriter out = new StringWriter();
        e.printStackTrace(new PrintWriter(out));
        return out.toString();
    }
}
