package dev.rollcall.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.local.etcd.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The discovery backend down for a while and back: a real etcd process stopped and restarted under
 * a resolver configured as a user would configure it. Meanwhile the last set is served and marked
 * stale; afterwards every change made after the recovery arrives.
 */
class DiscoveryOutageTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String PREFIX = "/rollcall/workers/";

    private EtcdServer etcd;
    private WorkerFleet fleet;
    private WorkerResolver resolver;

    @BeforeEach
    void start() {
        etcd = EtcdServer.start();
        fleet = WorkerFleet.start("1.0.0", "1.0.0", "1.0.0");
    }

    @AfterEach
    void stop() {
        if (resolver != null) {
            resolver.close();
        }
        fleet.close();
        etcd.close();
    }

    /** Writes through a client of the test's own, not the code under test; every call waits at most 10 s. */
    private void write(Map<String, WorkerEndpoint> puts, Set<String> deletes) throws Exception {
        try (Client client = Client.builder().endpoints(etcd.endpoint()).build()) {
            for (Map.Entry<String, WorkerEndpoint> e : puts.entrySet()) {
                client.getKVClient().put(bytes(PREFIX + e.getKey()), bytes(e.getValue().url())).get(10, TimeUnit.SECONDS);
            }
            for (String key : deletes) {
                client.getKVClient().delete(bytes(PREFIX + key)).get(10, TimeUnit.SECONDS);
            }
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private static Set<String> urls(Iterable<WorkerEndpoint> endpoints) {
        Set<String> s = new TreeSet<>();
        endpoints.forEach(e -> s.add(e.url()));
        return s;
    }

    private static Map<String, String> properties(String... keysAndValues) {
        Map<String, String> m = new java.util.HashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    private WorkerEndpoint w(int i) {
        return fleet.worker(i).endpoint();
    }

    @Test
    void servesTheLastSetMarkedStaleWhileEtcdIsDownAndAppliesEveryChangeMadeAfterItReturns() throws Exception {
        write(Map.of("w0", w(0), "w1", w(1), "w2", w(2)), Set.of());
        resolver = WorkerResolver.fromConfig(RollcallConfig.of(properties(
                "rollcall.discovery.type", "etcd",
                "rollcall.discovery.etcd.endpoints", etcd.endpoint(),
                "rollcall.discovery.etcd.prefix", PREFIX,
                "rollcall.discovery.etcd.connect-timeout", "1s",
                "rollcall.discovery.etcd.request-timeout", "2s",
                "rollcall.discovery.etcd.backoff.initial", "200ms",
                "rollcall.discovery.etcd.backoff.max", "1s",
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0",
                "rollcall.probe.backoff.initial", "100ms",
                "rollcall.probe.backoff.max", "1s")));
        FleetSnapshot before = resolver.awaitWorkers(3, WAIT);
        assertThat(before.staleSince()).isEmpty();

        etcd.stop();

        FleetSnapshot stale = resolver.await(s -> s.staleSince().isPresent(), WAIT);
        assertThat(urls(stale.compatibleEndpoints())).isEqualTo(urls(fleet.endpoints()));
        // Probing goes on meanwhile: a worker that dies during the outage is still left out.
        fleet.worker(2).stop();
        FleetSnapshot staleAndProbed = resolver.await(
                s -> s.status(w(2).url()).map(st -> st.state() != State.COMPATIBLE).orElse(false), WAIT);
        assertThat(staleAndProbed.staleSince()).isPresent();
        assertThat(urls(staleAndProbed.compatibleEndpoints())).containsExactlyInAnyOrder(w(0).url(), w(1).url());

        etcd.restart();
        WorkerEndpoint joined = fleet.addWorker("1.1.0").endpoint();
        write(Map.of("w3", joined), Set.of("w0", "w2"));

        FleetSnapshot after = resolver.await(s -> s.staleSince().isEmpty()
                && s.counts().candidates() == 2 && s.counts().compatible() == 2, WAIT);
        assertThat(urls(after.compatibleEndpoints())).isEqualTo(urls(java.util.List.of(w(1), joined)));
        assertThat(after.status(w(0).url())).isEmpty();
        assertThat(after.status(w(2).url())).isEmpty();
        assertThat(after.version(joined.url())).contains("1.1.0");
    }
}
