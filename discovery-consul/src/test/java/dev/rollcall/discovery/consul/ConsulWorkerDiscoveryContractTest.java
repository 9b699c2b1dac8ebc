package dev.rollcall.discovery.consul;

import com.google.gson.Gson;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.WorkerDiscoveryContract;
import dev.rollcall.testkit.consul.ConsulStandIn;
import dev.rollcall.testkit.faults.FaultProxies;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The discovery contract for the {@code consul} backend, against a Consul stand-in per test: a
 * candidate is a registered instance (always passing), an outage the stand-in stopped and restarted
 * on the same port. The 60 s blocking wait means every change, and close, lands while a query is
 * blocked.
 */
class ConsulWorkerDiscoveryContractTest extends WorkerDiscoveryContract {

    private static final String SERVICE = "workers";

    private ConsulStandIn standIn;
    private TestAgent agent;
    private final Set<String> registered = new HashSet<>();

    @BeforeEach
    void startStandIn() {
        standIn = ConsulStandIn.start();
        agent = new TestAgent(standIn.address(), null);
    }

    @AfterEach
    void stopStandIn() {
        standIn.close();
    }

    @Override
    protected String type() {
        return "consul";
    }

    @Override
    protected Map<String, String> settings() {
        return Map.of("address", standIn.address(), "service", SERVICE, "wait", "60s",
                "backoff.initial", "100ms", "backoff.max", "500ms", "rate-limit.interval", "100ms");
    }

    @Override
    protected void writeCandidates(Set<WorkerEndpoint> candidates) {
        Set<String> ids = new HashSet<>();
        for (WorkerEndpoint e : candidates) {
            String id = e.host() + "_" + e.port();
            ids.add(id);
            if (!registered.contains(id)) {
                agent.register(SERVICE, id, e.host(), e.port());
            }
        }
        registered.stream().filter(id -> !ids.contains(id)).forEach(agent::deregister);
        registered.clear();
        registered.addAll(ids);
    }

    @Override
    protected String writeMalformedEntry() {
        standIn.injectRawInstance(SERVICE, """
                {"Node":{"Node":"node-9","Address":"127.0.0.9"},
                 "Service":{"ID":"port-is-text","Service":"workers","Port":"seven thousand"},"Checks":[]}""");
        return "service ID 'port-is-text' on node 'node-9'";
    }

    /** An instance whose service ID and node name hold it, next to a port that is not a number. */
    @Override
    protected Optional<String> writeHostileEntry(String hostile) {
        String id = "hostile" + hostile;
        standIn.injectRawInstance(SERVICE, "{\"Node\":{\"Node\":" + new Gson().toJson("node" + hostile)
                + ",\"Address\":\"127.0.0.9\"},\"Service\":{\"ID\":" + new Gson().toJson(id)
                + ",\"Service\":\"workers\",\"Port\":\"seven\"},\"Checks\":[]}");
        return Optional.of("service ID '" + PeerText.escape(id) + "' on node '" + PeerText.escape("node" + hostile) + "'");
    }

    /**
     * Through a proxy, with blocking queries of 60 s: only the backend's own sign-of-life request
     * (every 300 ms, 500 ms to answer) can tell a silent agent from a quiet service.
     */
    @Override
    protected Optional<SilentServer> silentServer(FaultProxies proxies) {
        String via = "http://" + proxies.tcp(standIn.port()).hostAndPort();
        return Optional.of(new SilentServer(Map.of("address", via, "service", SERVICE, "wait", "60s",
                "keepalive-time", "300ms", "request-timeout", "500ms", "backoff.initial", "100ms",
                "backoff.max", "500ms", "rate-limit.interval", "100ms"), Duration.ofMillis(800)));
    }

    @Override
    protected String makeSourceUnreachable() {
        standIn.stop();
        return standIn.address();
    }

    @Override
    protected void makeSourceReachable() {
        standIn.restart();
    }

    @Override
    protected List<String> threadNamePrefixes() {
        return List.of(ConsulWorkerDiscovery.THREAD_NAME);     // the keepalive thread's name starts with it too
    }
}
