package dev.rollcall.discovery.etcd;

import static dev.rollcall.discovery.etcd.Etcd.bytes;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.WorkerDiscoveryContract;
import dev.rollcall.testkit.faults.FaultProxies;
import dev.rollcall.local.etcd.EtcdServer;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The discovery contract for the {@code etcd} backend, against a real etcd per test: a candidate is
 * a key under the prefix, each change one transaction, and an outage the server stopped (and
 * restarted on the same ports with the same data).
 */
class EtcdWorkerDiscoveryContractTest extends WorkerDiscoveryContract {

    private static final String PREFIX = "/rollcall/contract/";

    private EtcdServer server;
    private Etcd etcd;
    private final Set<String> keysWritten = new HashSet<>();

    @BeforeEach
    void startEtcd() {
        server = EtcdServer.start();
        etcd = new Etcd(server);
    }

    @AfterEach
    void stopEtcd() {
        etcd.close();
        server.close();
    }

    @Override
    protected String type() {
        return "etcd";
    }

    @Override
    protected Map<String, String> settings() {
        return Map.of("endpoints", server.endpoint(), "prefix", PREFIX, "connect-timeout", "1s",
                "request-timeout", "1s", "backoff.initial", "100ms", "backoff.max", "500ms");
    }

    @Override
    protected void writeCandidates(Set<WorkerEndpoint> candidates) {
        // One transaction: the keys no longer listed go, the listed ones are (re)written.
        List<Op> ops = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        for (WorkerEndpoint e : candidates) {
            String key = PREFIX + e.host() + "_" + e.port();
            keys.add(key);
            ops.add(Op.put(bytes(key), bytes(e.url()), PutOption.DEFAULT));
        }
        keysWritten.stream().filter(k -> !keys.contains(k))
                .forEach(k -> ops.add(Op.delete(bytes(k), DeleteOption.DEFAULT)));
        keysWritten.clear();
        keysWritten.addAll(keys);
        Etcd.call(() -> etcd.client().getKVClient().txn().Then(ops.toArray(Op[]::new)).commit()
                .get(10, TimeUnit.SECONDS));
    }

    @Override
    protected String writeMalformedEntry() {
        String key = PREFIX + "malformed";
        etcd.put(key, "{\"endpoint\": grpc://127.0.0.99:7099}");
        return "etcd key " + key;
    }

    /** Both the key and the value hold it: etcd keys are bytes, anything goes. */
    @Override
    protected Optional<String> writeHostileEntry(String hostile) {
        String key = PREFIX + "hostile" + hostile;
        etcd.put(key, "grpc://127.0.0.98:7098" + hostile);
        return Optional.of("etcd key " + PeerText.escape(key) + ": skipping malformed worker value");
    }

    /**
     * Through a proxy, asking for a sign of life every 300 ms with a 500 ms deadline: the README's
     * bound is keepalive-time + request-timeout.
     */
    @Override
    protected Optional<SilentServer> silentServer(FaultProxies proxies) {
        String via = "http://" + proxies.tcp(server.clientPort()).hostAndPort();
        return Optional.of(new SilentServer(Map.of("endpoints", via, "prefix", PREFIX, "connect-timeout", "1s",
                "request-timeout", "500ms", "keepalive-time", "300ms", "backoff.initial", "100ms",
                "backoff.max", "500ms"), Duration.ofMillis(800)));
    }

    @Override
    protected String makeSourceUnreachable() {
        server.stop();
        return server.endpoint();
    }

    @Override
    protected void makeSourceReachable() {
        server.restart();
    }

    /**
     * Ours only: jetcd's gRPC threads come from gRPC's shared pools, which the test's own client
     * keeps alive (and which gRPC releases about a second after the last channel anyway).
     */
    @Override
    protected List<String> threadNamePrefixes() {
        return List.of(EtcdWorkerDiscovery.THREAD_NAME);
    }
}
