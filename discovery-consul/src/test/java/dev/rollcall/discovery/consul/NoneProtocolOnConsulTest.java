package dev.rollcall.discovery.consul;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.consul.ConsulStandIn;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code rollcall.probe.protocol=none} on Consul (the stand-in): the verdicts come from each
 * service's {@code meta.version} alone, and nothing is sent to the instances (counted: the
 * resolver's probes, and the connections a socket listening at an instance's address gets).
 */
class NoneProtocolOnConsulTest {

    private static final String P = "rollcall.discovery.consul.";
    private static final Duration WITHIN = Duration.ofSeconds(20);

    @Test
    void judgesTheServicesMetaVersionsWithZeroProbesSent() throws Exception {
        try (ConsulStandIn consul = ConsulStandIn.start();
             ServerSocket a = listening(); ServerSocket b = listening(); ServerSocket c = listening()) {
            AtomicInteger connections = new AtomicInteger();
            List.of(a, b, c).forEach(s -> countConnections(s, connections));
            TestAgent agent = new TestAgent(consul.address(), null);
            agent.register("workers", "a", "127.0.0.1", a.getLocalPort(), List.of(), Map.of("version", "2.0.0"), null, null);
            agent.register("workers", "b", "127.0.0.1", b.getLocalPort(), List.of(), Map.of("version", "1.9.0"), null, null);
            agent.register("workers", "c", "127.0.0.1", c.getLocalPort(), List.of(), Map.of("zone", "eu-1"), null, null);

            try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                    "rollcall.discovery.type", "consul",
                    P + "address", consul.address(),
                    P + "service", "workers",
                    P + "wait", "1s",
                    P + "rate-limit.interval", "100ms",
                    "rollcall.policy.type", "exact",
                    "rollcall.policy.exact.version", "2.0.0",
                    "rollcall.probe.protocol", "none")))) {
                String two = "grpc://127.0.0.1:" + a.getLocalPort();
                String older = "grpc://127.0.0.1:" + b.getLocalPort();
                String unclaimed = "grpc://127.0.0.1:" + c.getLocalPort();

                FleetSnapshot s = resolver.await(x -> x.counts().candidates() == 3 && x.counts().pending() == 0, WITHIN);
                assertThat(s.status(two).orElseThrow().state()).isEqualTo(State.COMPATIBLE);
                assertThat(s.status(two).orElseThrow().info().orElseThrow().version()).isEqualTo("2.0.0");
                assertThat(s.status(older).orElseThrow().state()).isEqualTo(State.REJECTED);
                assertThat(s.status(unclaimed).orElseThrow().state()).isEqualTo(State.UNREACHABLE);
                assertThat(s.status(unclaimed).orElseThrow().reason()).contains("rollcall.version", "rollcall.probe.protocol");

                // A re-registration with a new meta version is judged from it, still without a probe.
                agent.register("workers", "b", "127.0.0.1", b.getLocalPort(), List.of(), Map.of("version", "2.0.0"),
                        null, null);
                resolver.await(x -> x.status(older).map(st -> st.state() == State.COMPATIBLE).orElse(false), WITHIN);

                assertThat(resolver.probesSent()).as("what rollcall.probes.sent reports").isZero();
                assertThat(connections.get()).as("nothing dialled an instance").isZero();
            }
        }
    }

    private static ServerSocket listening() throws IOException {
        return new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    }

    private static void countConnections(ServerSocket socket, AtomicInteger accepted) {
        Thread t = new Thread(() -> {
            while (!socket.isClosed()) {
                try (Socket s = socket.accept()) {
                    accepted.incrementAndGet();
                } catch (IOException closed) {
                    return;
                }
            }
        }, "rollcall-test-instance-listener-" + socket.getLocalPort());
        t.setDaemon(true);
        t.start();
    }
}
