package dev.rollcall.discovery.k8s;

import static dev.rollcall.discovery.k8s.Slices.endpoint;
import static dev.rollcall.discovery.k8s.Slices.ipv4;
import static dev.rollcall.discovery.k8s.Slices.port;
import static dev.rollcall.discovery.k8s.Slices.ready;
import static dev.rollcall.discovery.k8s.Slices.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.policy.ExactVersionPolicy;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.local.WorkerFleet;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A real {@link WorkerResolver} following a service through the mock API server, probing real
 * loopback workers: what a coordinator sees when pods become ready, stop being ready, terminate, go
 * away, and when the API server itself goes away.
 */
class KubernetesResolverTest {

    private static final String NS = KubernetesWorkerDiscoveryTest.NS;
    private static final Duration WITHIN = KubernetesWorkerDiscoveryTest.WITHIN;

    private MockKubernetesApi api;
    private WorkerFleet fleet;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeAll
    static void warmUp() {
        MockKubernetesApi.warmUp();
    }

    @BeforeEach
    void start() {
        api = MockKubernetesApi.start();
        fleet = WorkerFleet.start("1.0.0", "1.0.0", "1.0.0");
    }

    @AfterEach
    void stop() throws Exception {
        api.close();    // first: see KubernetesWorkerDiscoveryTest.stopAll
        for (AutoCloseable c : toClose) {
            c.close();
        }
        fleet.close();
    }

    @Test
    void readyEndpointsOfTheServicesTwoSlicesBecomeItsWorkers() throws Exception {
        create(sliceFor("compute-a", fleet.worker(0), true));
        create(sliceFor("compute-b", fleet.worker(1), true));

        // The way users configure it: found through ServiceLoader, keys checked by core.
        WorkerResolver resolver = closing(WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "k8s",
                "rollcall.discovery.k8s.service", "compute",
                "rollcall.discovery.k8s.namespace", NS,
                "rollcall.discovery.k8s.master", api.url(),
                "rollcall.policy.type", "exact",
                "rollcall.policy.exact.version", "1.0.0"))));

        resolver.awaitWorkers(2, WITHIN);
        assertThat(urls(resolver.workers())).containsExactlyInAnyOrder(url(0), url(1));
        assertThat(resolver.discoveryDescription()).isEqualTo("k8s[workers/compute, single port, 2 endpoints]");
    }

    @Test
    void anEndpointThatIsNoLongerReadyLeavesTheWorkers() throws Exception {
        create(sliceFor("compute-a", fleet.worker(0), true));
        create(sliceFor("compute-b", fleet.worker(1), true));
        WorkerResolver resolver = resolver();
        resolver.awaitWorkers(2, WITHIN);

        update(sliceFor("compute-a", fleet.worker(0), false));

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(resolver.workers())).containsExactly(url(1)));
        assertThat(resolver.pin().counts().candidates()).isEqualTo(1);
    }

    @Test
    void aTerminatingEndpointThatNoLongerServesLeavesTheWorkersThoughReadyStaysTrue() throws Exception {
        create(sliceFor("compute-a", fleet.worker(0), true));
        create(sliceFor("compute-b", fleet.worker(1), true));
        WorkerResolver resolver = resolver();
        resolver.awaitWorkers(2, WITHIN);

        // As for a service with publishNotReadyAddresses: "ready" stays true, serving follows the pod.
        update(ipv4("compute-a", "compute", fleet.worker(0).endpoint().port(),
                Slices.conditions("127.0.0.1", "compute-a", true, false, true)));

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(resolver.workers())).containsExactly(url(1)));
        assertThat(fleet.worker(0).isRunning()).as("the worker itself still answers probes").isTrue();
        // A terminating endpoint that still serves is delivered with rollcall.state=draining
        // (KubernetesWorkerDiscoveryTest); that core keeps it out of new work is core's to test.
    }

    @Test
    void aTerminatingEndpointThatStillServesIsDrainingNotGone() throws Exception {
        create(sliceFor("compute-a", fleet.worker(0), true));
        create(sliceFor("compute-b", fleet.worker(1), true));
        WorkerResolver resolver = resolver();
        resolver.awaitWorkers(2, WITHIN);

        update(ipv4("compute-a", "compute", fleet.worker(0).endpoint().port(),
                Slices.conditions("127.0.0.1", "compute-a", false, true, true)));

        await().atMost(WITHIN).untilAsserted(() -> assertThat(urls(resolver.workers())).containsExactly(url(1)));
        // The update also brings the pod's UID (an instance id where there was none): the resolver
        // probes the worker again first, PENDING meanwhile, so wait for the state, do not race it.
        await().atMost(WITHIN).untilAsserted(() -> assertThat(resolver.pin().status(url(0)).orElseThrow().state())
                .as("still a candidate, finishing its work").isEqualTo(dev.rollcall.api.registry.WorkerStatus.State.DRAINING));
        assertThat(resolver.pin().counts().draining()).isEqualTo(1);
    }

    @Test
    void aNewlyReadyEndpointJoinsAndDeletingTheServicesSlicesEmptiesTheWorkers() throws Exception {
        create(sliceFor("compute-a", fleet.worker(0), true));
        create(sliceFor("compute-b", fleet.worker(1), false));
        WorkerResolver resolver = resolver();
        resolver.awaitWorkers(1, WITHIN);
        assertThat(urls(resolver.workers())).containsExactly(url(0));

        update(sliceFor("compute-b", fleet.worker(1), true));
        resolver.awaitWorkers(2, WITHIN);

        delete("compute-a");
        delete("compute-b");
        await().atMost(WITHIN).untilAsserted(() -> {
            assertThat(resolver.workers()).isEmpty();
            assertThat(resolver.pin().counts().candidates()).isZero();
        });
        assertThat(resolver.pin().staleSince()).as("an empty service is news, not a failure").isEmpty();
    }

    @Test
    void anApiServerThatGoesAwayLeavesTheLastWorkersInPlaceAndTheBackendRecoversWhenItReturns() throws Exception {
        create(sliceFor("compute-a", fleet.worker(0), true));
        create(sliceFor("compute-b", fleet.worker(1), true));
        WorkerResolver resolver = resolver();
        resolver.awaitWorkers(2, WITHIN);

        api.stop();
        await().atMost(WITHIN).until(() -> resolver.pin().staleSince().isPresent());
        assertThat(urls(resolver.workers())).containsExactlyInAnyOrder(url(0), url(1));

        api.restart();      // the same API server, over the same storage
        await().atMost(WITHIN).until(() -> resolver.pin().staleSince().isEmpty());
        assertThat(urls(resolver.workers())).containsExactlyInAnyOrder(url(0), url(1));

        create(sliceFor("compute-c", fleet.worker(2), true));   // and it follows changes again
        await().atMost(WITHIN).untilAsserted(() ->
                assertThat(urls(resolver.workers())).containsExactlyInAnyOrder(url(0), url(1), url(2)));
    }

    @Test
    void anIpv6EndpointBecomesAWorker() throws Exception {
        assumeThat(ipv6LoopbackAvailable()).as("this machine can bind [::1]").isTrue();
        RollcallWorker v6 = RollcallWorker.builder().host("::1").port(0).version("1.0.0").start();
        toClose.add(v6);
        create(slice("compute-v6", "compute", "IPv6", List.of(port("grpc", v6.port())), ready("::1", "compute-v6")));
        create(sliceFor("compute-a", fleet.worker(0), true));
        WorkerResolver resolver = resolver();

        resolver.awaitWorkers(2, WITHIN);

        assertThat(urls(resolver.workers())).containsExactlyInAnyOrder("grpc://[::1]:" + v6.port(), url(0));
    }

    // ---- helpers

    private WorkerResolver resolver() {
        String prefix = "rollcall.discovery.k8s.";
        Map<String, String> keys = new HashMap<>();
        keys.put(prefix + "service", "compute");
        keys.put(prefix + "namespace", NS);
        keys.put(prefix + "master", api.url());
        KubernetesSettings options = new KubernetesWorkerDiscoveryProvider()
                .options(Settings.of(keys).scope(prefix)).withTimings(KubernetesWorkerDiscoveryTest.FAST);
        return closing(WorkerResolver.builder()
                .discovery(new KubernetesWorkerDiscovery(options))
                .policy(ExactVersionPolicy.of("1.0.0"))
                .build());
    }

    private WorkerResolver closing(WorkerResolver resolver) {
        toClose.add(resolver);
        return resolver;
    }

    /** One slice per worker: the fleet's workers share 127.0.0.1 and differ by port. */
    private static EndpointSlice sliceFor(String name, FleetWorker worker, boolean ready) {
        return ipv4(name, "compute", worker.endpoint().port(), endpoint("127.0.0.1", name, ready, false));
    }

    private void create(EndpointSlice slice) {
        api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(slice).create();
    }

    private void update(EndpointSlice slice) {
        api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(slice).update();
    }

    private void delete(String name) {
        api.client().discovery().v1().endpointSlices().inNamespace(NS).withName(name).delete();
    }

    private String url(int worker) {
        return fleet.worker(worker).endpoint().url();
    }

    private static Set<String> urls(List<WorkerInfo> workers) {
        return workers.stream().map(w -> w.endpoint().url()).collect(Collectors.toSet());
    }

    private static boolean ipv6LoopbackAvailable() {
        try (ServerSocket s = new ServerSocket()) {
            InetAddress loopback = InetAddress.getByName("::1");
            s.bind(new InetSocketAddress(loopback, 0));
            return loopback instanceof Inet6Address;
        } catch (IOException e) {
            return false;
        }
    }
}
