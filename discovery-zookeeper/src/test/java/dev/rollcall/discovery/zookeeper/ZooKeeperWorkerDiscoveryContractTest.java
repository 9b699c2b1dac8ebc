package dev.rollcall.discovery.zookeeper;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.WorkerDiscoveryContract;
import dev.rollcall.testkit.faults.FaultProxies;
import dev.rollcall.testkit.zookeeper.ZooKeeperServer;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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

    /**
     * Through a proxy, with a 3 s session: ZooKeeper's client hears from the server (answers or
     * pings) at least every third of it and gives the connection up after two thirds of it, 2 s,
     * the bound the README gives.
     */
    @Override
    protected Optional<SilentServer> silentServer(FaultProxies proxies) {
        String via = proxies.tcp(server.port()).hostAndPort();
        return Optional.of(new SilentServer(Map.of("connect", via, "path", PATH, "session-timeout", "3s",
                "connection-timeout", "1s", "backoff.initial", "100ms", "backoff.max", "500ms"),
                Duration.ofMillis(2000)));
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

    /** A node whose data is a URL with the hostile text in it; ZooKeeper allows no control characters in names. */
    @Override
    protected Optional<String> writeHostileEntry(String hostile) {
        zk.put(PATH + "/hostile", "grpc://127.0.0.98:7098" + hostile);
        return Optional.of(PeerText.escape(hostile));
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
