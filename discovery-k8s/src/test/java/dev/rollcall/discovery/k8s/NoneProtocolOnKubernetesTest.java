package dev.rollcall.discovery.k8s;

import static dev.rollcall.discovery.k8s.Slices.ipv4;
import static dev.rollcall.discovery.k8s.Slices.ready;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code rollcall.probe.protocol=none} on Kubernetes: the verdicts come from the pods'
 * {@code app.kubernetes.io/version} labels alone, and nothing is sent to the pods (counted: the
 * resolver's probes, and the connections a listening socket at one endpoint's address gets).
 */
class NoneProtocolOnKubernetesTest {

    private static final String NS = KubernetesWorkerDiscoveryTest.NS;
    private static final Duration WITHIN = KubernetesWorkerDiscoveryTest.WITHIN;

    private MockKubernetesApi api;

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
        api.close();
    }

    @Test
    void judgesThePodsLabelsWithZeroProbesSent() throws Exception {
        try (ServerSocket listening = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.2"))) {
            AtomicInteger connections = countConnections(listening);
            int port = listening.getLocalPort();
            api.client().pods().inNamespace(NS).resource(PodVersionLabelTest.pod("w-1",
                    Map.of("app.kubernetes.io/version", "1.5.0"))).create();
            api.client().pods().inNamespace(NS).resource(PodVersionLabelTest.pod("w-2",
                    Map.of("app.kubernetes.io/version", "1.4.0"))).create();
            api.client().pods().inNamespace(NS).resource(PodVersionLabelTest.pod("w-3", Map.of("app", "workers")))
                    .create();
            api.client().discovery().v1().endpointSlices().inNamespace(NS).resource(ipv4("compute-a", "compute", port,
                    ready("127.0.0.2", "w-1"), ready("127.0.0.3", "w-2"), ready("127.0.0.4", "w-3"))).create();

            try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                    "rollcall.discovery.type", "k8s",
                    "rollcall.discovery.k8s.service", "compute",
                    "rollcall.discovery.k8s.namespace", NS,
                    "rollcall.discovery.k8s.master", api.url(),
                    "rollcall.policy.type", "exact",
                    "rollcall.policy.exact.version", "1.5.0",
                    "rollcall.probe.protocol", "none")))) {
                String one = "grpc://127.0.0.2:" + port;
                String two = "grpc://127.0.0.3:" + port;
                String three = "grpc://127.0.0.4:" + port;

                FleetSnapshot s = resolver.await(x -> x.counts().candidates() == 3 && x.counts().pending() == 0, WITHIN);
                assertThat(s.status(one).orElseThrow().state()).isEqualTo(State.COMPATIBLE);
                assertThat(s.status(two).orElseThrow().state()).isEqualTo(State.REJECTED);
                assertThat(s.status(three).orElseThrow().state()).isEqualTo(State.UNREACHABLE);
                assertThat(s.status(three).orElseThrow().reason()).contains("rollcall.version", "rollcall.probe.protocol");

                // A rollout relabels w-2: judged from the new label, still without a probe.
                api.client().pods().inNamespace(NS).withName("w-2").edit(p -> new PodBuilder(p).editMetadata()
                        .addToLabels("app.kubernetes.io/version", "1.5.0").endMetadata().build());
                resolver.await(x -> x.status(two).map(st -> st.state() == State.COMPATIBLE).orElse(false), WITHIN);

                assertThat(resolver.probesSent()).as("what rollcall.probes.sent reports").isZero();
                assertThat(connections.get()).as("nothing dialled the pod").isZero();
            }
        }
    }

    private static AtomicInteger countConnections(ServerSocket socket) {
        AtomicInteger accepted = new AtomicInteger();
        Thread t = new Thread(() -> {
            while (!socket.isClosed()) {
                try (Socket s = socket.accept()) {
                    accepted.incrementAndGet();
                } catch (IOException closed) {
                    return;
                }
            }
        }, "rollcall-test-pod-listener");
        t.setDaemon(true);
        t.start();
        return accepted;
    }
}
