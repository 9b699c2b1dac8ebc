package dev.rollcall.core.protocols;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.RollcallMetrics;
import dev.rollcall.core.WorkerResolver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code none}: verdicts from discovery's labels alone, and nothing sent. The candidates listen (a
 * socket that counts connections), so a protocol that dialled them would be seen doing it.
 */
class NoneProtocolTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final VersionPolicy EXACTLY_2 = w -> w.version().equals("2.0.0") ? Verdict.accept()
            : Verdict.reject("not 2.0.0");

    @Test
    void judgesTheClaimedVersionsWithoutSendingAProbeOrOpeningAConnection() throws Exception {
        HandedDiscovery discovery = new HandedDiscovery();
        try (Listening a = new Listening(); Listening b = new Listening(); Listening c = new Listening();
             WorkerResolver resolver = WorkerResolver.builder().name("none-test").discovery(discovery)
                     .policy(EXACTLY_2).probeProtocol("none").build()) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new RollcallMetrics(resolver).bindTo(registry);
            WorkerEndpoint two = a.endpoint(Map.of(WorkerEndpoint.VERSION_LABEL, "2.0.0", "zone", "a"));
            WorkerEndpoint one = b.endpoint(Map.of(WorkerEndpoint.VERSION_LABEL, "1.0.0"));
            WorkerEndpoint unlabelled = c.endpoint(Map.of());
            discovery.offer(two, one, unlabelled);

            FleetSnapshot s = resolver.await(x -> x.counts().candidates() == 3 && x.counts().pending() == 0, WAIT);
            assertThat(s.status(two.url()).orElseThrow().state()).isEqualTo(State.COMPATIBLE);
            assertThat(s.status(two.url()).orElseThrow().info().orElseThrow().labels()).containsEntry("zone", "a");
            assertThat(s.status(one.url()).orElseThrow().state()).isEqualTo(State.REJECTED);
            assertThat(s.status(unlabelled.url()).orElseThrow().state()).isEqualTo(State.UNREACHABLE);
            assertThat(s.status(unlabelled.url()).orElseThrow().reason())
                    .contains(WorkerEndpoint.VERSION_LABEL).contains("rollcall.probe.protocol").contains("none");

            assertThat(resolver.probesSent()).isZero();
            assertThat(registry.get("rollcall.probes.sent").functionCounter().count()).isZero();
            assertThat(a.connections() + b.connections() + c.connections()).isZero();

            // A new claim is judged as soon as discovery says it: no probe to wait for.
            discovery.offer(two, b.endpoint(Map.of(WorkerEndpoint.VERSION_LABEL, "2.0.0")), unlabelled);
            FleetSnapshot relabelled = resolver.await(x -> x.status(one.url())
                    .map(st -> st.state() == State.COMPATIBLE).orElse(false), WAIT);
            assertThat(relabelled.counts().compatible()).isEqualTo(2);
            assertThat(resolver.probesSent()).isZero();
            assertThat(a.connections() + b.connections() + c.connections()).isZero();
        }
    }

    @Test
    void opensNoConnectionSoTheKeptChannelCapCountsNothing() throws Exception {
        HandedDiscovery discovery = new HandedDiscovery();
        try (Listening a = new Listening(); Listening b = new Listening(); Listening c = new Listening();
             WorkerResolver resolver = WorkerResolver.builder().name("none-cap-test").discovery(discovery)
                     .policy(EXACTLY_2).probeProtocol("none").maxKeptChannels(1).build()) {
            discovery.offer(a.endpoint(Map.of(WorkerEndpoint.VERSION_LABEL, "2.0.0")),
                    b.endpoint(Map.of(WorkerEndpoint.VERSION_LABEL, "2.0.0")),
                    c.endpoint(Map.of(WorkerEndpoint.VERSION_LABEL, "2.0.0")));

            FleetSnapshot s = resolver.await(x -> x.counts().compatible() == 3, WAIT);
            assertThat(s.counts().overKeptCap()).as("no descriptor spent, none past the cap").isZero();
            assertThat(a.connections() + b.connections() + c.connections()).isZero();
        }
    }

    /** A loopback port that counts the connections made to it and never answers. */
    private static final class Listening implements AutoCloseable {
        private final ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        private final AtomicInteger accepted = new AtomicInteger();

        Listening() throws IOException {
            Thread t = new Thread(() -> {
                while (!socket.isClosed()) {
                    try (Socket s = socket.accept()) {
                        accepted.incrementAndGet();
                    } catch (IOException closed) {
                        return;
                    }
                }
            }, "rollcall-test-listening-" + socket.getLocalPort());
            t.setDaemon(true);
            t.start();
        }

        WorkerEndpoint endpoint(Map<String, String> labels) {
            return WorkerEndpoint.of("127.0.0.1", socket.getLocalPort()).withLabels(labels);
        }

        int connections() {
            return accepted.get();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
