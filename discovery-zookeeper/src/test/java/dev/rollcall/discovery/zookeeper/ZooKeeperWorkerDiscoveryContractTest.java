package dev.rollcall.discovery.zookeeper;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.WorkerDiscoveryContract;
import dev.rollcall.testkit.zookeeper.ZooKeeperServer;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The discovery contract for the {@code zookeeper} backend, against a real ZooKeeper per test (in
 * the test JVM): a candidate is a child of the path holding its URL, a malformed entry a child whose
 * x-discovery instance has no port, and an outage the server stopped (and restarted on the same
 * port with the same data).
 */
class ZooKeeperWorkerDiscoveryContractTest extends WorkerDiscoveryContract {

    private static final String PATH = "/rollcall/contract";

    private ZooKeeperServer server;
    private ZooKeeper zk;
    private final Set<String> nodesWritten = new HashSet<>();

    @BeforeEach
    void startZooKeeper() {
        server = ZooKeeperServer.start();
        zk = new ZooKeeper(server);
        nodesWritten.clear();
    }

    @AfterEach
    void stopZooKeeper() {
        zk.close();
        server.close();
    }

    @Override
    protected String type() {
        return "zookeeper";
    }

    @Override
    protected Map<String, String> settings() {
        return Map.of("connect", server.connectString(), "path", PATH, "session-timeout", "4s",
                "connection-timeout", "1s", "backoff.initial", "100ms", "backoff.max", "500ms");
    }

    @Override
    protected void writeCandidates(Set<WorkerEndpoint> candidates) {
        Set<String> nodes = new HashSet<>();
        for (WorkerEndpoint e : candidates) {
            String node = PATH + "/" + e.host() + "_" + e.port();
            nodes.add(node);
            zk.put(node, e.url());
        }
        nodesWritten.stream().filter(n -> !nodes.contains(n)).forEach(zk::delete);
        nodesWritten.clear();
        nodesWritten.addAll(nodes);
    }

    @Override
    protected String writeMalformedEntry() {
        String node = PATH + "/malformed";
        zk.put(node, "{\"name\":\"workers\",\"id\":\"malformed\",\"address\":\"127.0.0.99\"}");
        return node;
    }

    @Override
    protected String makeSourceUnreachable() {
        server.stop();
        return server.connectString();
    }

    @Override
    protected void makeSourceReachable() {
        server.restart();
    }

    /** The watch thread and the Curator/ZooKeeper client threads named after it; the test's own client's are not. */
    @Override
    protected List<String> threadNamePrefixes() {
        return List.of(ZooKeeperWorkerDiscovery.THREAD_NAME);
    }
}
