package dev.rollcall.discovery.k8s;

import static dev.rollcall.discovery.k8s.Slices.ipv4;
import static dev.rollcall.discovery.k8s.Slices.port;
import static dev.rollcall.discovery.k8s.Slices.ready;
import static dev.rollcall.discovery.k8s.Slices.slice;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.testkit.WorkerDiscoveryContract;
import dev.rollcall.testkit.faults.FaultProxies;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The discovery contract for the {@code k8s} backend, against fabric8's mock API server per test
 * (real HTTP and WebSocket watches): a candidate is an EndpointSlice of the service with one ready
 * endpoint, an outage the API server stopped and restarted on the same port over the same objects.
 */
class KubernetesWorkerDiscoveryContractTest extends WorkerDiscoveryContract {

    private static final String NS = KubernetesWorkerDiscoveryTest.NS;
    private static final String SERVICE = "compute";

    private MockKubernetesApi api;
    private final Set<String> slicesWritten = new HashSet<>();

    @BeforeAll
    static void warmUp() {
        MockKubernetesApi.warmUp();
    }

    @BeforeEach
    void startApi() {
        api = MockKubernetesApi.start();
    }

    @AfterEach
    void stopApi() {
        // Before the backends close: see KubernetesWorkerDiscoveryTest.stopAll.
        api.close();
    }

    @Override
    protected String type() {
        return "k8s";
    }

    @Override
    protected Map<String, String> settings() {
        return Map.of("service", SERVICE, "namespace", NS, "master", api.url());
    }

    /** Through the provider's options, with the short reconnect timings no setting reaches. */
    @Override
    protected WorkerDiscovery newDiscovery(Map<String, String> settings) {
        Map<String, String> full = new HashMap<>();
        settings.forEach((k, v) -> full.put(KubernetesWorkerDiscoveryTest.PREFIX + k, v));
        return new KubernetesWorkerDiscovery(new KubernetesWorkerDiscoveryProvider()
                .options(Settings.of(full).scope(KubernetesWorkerDiscoveryTest.PREFIX))
                .withTimings(KubernetesWorkerDiscoveryTest.FAST));
    }

    @Override
    protected void writeCandidates(Set<WorkerEndpoint> candidates) {
        Set<String> names = new HashSet<>();
        for (WorkerEndpoint e : candidates) {
            String name = "contract-" + e.host().replace('.', '-') + "-" + e.port();
            names.add(name);
            if (!slicesWritten.contains(name)) {
                api.client().discovery().v1().endpointSlices().inNamespace(NS)
                        .resource(ipv4(name, SERVICE, e.port(), ready(e.host(), name))).create();
            }
        }
        slicesWritten.stream().filter(n -> !names.contains(n))
                .forEach(n -> api.client().discovery().v1().endpointSlices().inNamespace(NS).withName(n).delete());
        slicesWritten.clear();
        slicesWritten.addAll(names);
    }

    @Override
    protected String writeMalformedEntry() {
        // Two ports and no rollcall.discovery.k8s.port to choose between them.
        api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(slice("two-ports", SERVICE, "IPv4",
                List.of(port("metrics", 9090), port("grpc", 7001)), ready("127.0.0.99", "two-ports"))).create();
        return "EndpointSlice " + NS + "/two-ports";
    }

    /**
     * A slice whose name holds it. The mock stores any name; a real API server allows only DNS
     * names, but the backend must not rely on the server it talks to for what reaches its log.
     */
    @Override
    protected Optional<String> writeHostileEntry(String hostile) {
        String name = "hostile" + hostile;
        api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(slice(name, SERVICE, "IPv4",
                List.of(port("metrics", 9090), port("grpc", 7001)), ready("127.0.0.98", "hostile"))).create();
        return Optional.of("EndpointSlice " + NS + "/" + PeerText.escape(name) + ": skipping the slice");
    }

    /**
     * Through a proxy, asking the API server for a sign of life every 300 ms, 500 ms to answer:
     * the README's bound is keepalive-time + request-timeout. Without the pod informer: the
     * promise is about the slices, and with a 500 ms request-timeout two first lists through the
     * proxy at once timed out before the silence on a loaded machine (once in five runs here, when
     * the module ran after three others), which the contract counts as an error.
     */
    @Override
    protected Optional<SilentServer> silentServer(FaultProxies proxies) {
        String via = "http://" + proxies.tcp(api.port()).hostAndPort() + "/";
        return Optional.of(new SilentServer(Map.of("service", SERVICE, "namespace", NS, "master", via,
                "keepalive-time", "300ms", "request-timeout", "500ms", "version-label", "none"), Duration.ofMillis(800)));
    }

    @Override
    protected String makeSourceUnreachable() {
        api.stop();
        return api.url();
    }

    @Override
    protected void makeSourceReachable() {
        api.restart();
    }

    @Override
    protected List<String> threadNamePrefixes() {
        return List.of("rollcall-k8s-");
    }
}
