package dev.rollcall.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.local.etcd.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A coordinator that starts while etcd is down: it starts from the last-known-good candidates in
 * {@code rollcall.discovery.cache.file}, stale since the file was written, and drops the file's set
 * as soon as etcd answers. A real etcd, stopped and restarted.
 */
class CandidateCacheOutageTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String PREFIX = "/rollcall/cache-test/";

    @TempDir
    Path dir;
    private EtcdServer etcd;
    private WorkerFleet fleet;

    @BeforeEach
    void start() {
        etcd = EtcdServer.start();
        fleet = WorkerFleet.start("1.0.0", "1.0.0", "1.0.0");
    }

    @AfterEach
    void stop() {
        fleet.close();
        etcd.close();
    }

    private RollcallConfig config(Path cache) {
        Map<String, String> m = new java.util.HashMap<>(Map.of(
                "rollcall.discovery.type", "etcd",
                "rollcall.discovery.etcd.endpoints", etcd.endpoint(),
                "rollcall.discovery.etcd.prefix", PREFIX,
                "rollcall.discovery.etcd.connect-timeout", "1s",
                "rollcall.discovery.etcd.request-timeout", "2s",
                "rollcall.discovery.etcd.backoff.initial", "200ms",
                "rollcall.discovery.etcd.backoff.max", "1s",
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0"));
        m.put("rollcall.discovery.cache.file", cache.toString());
        m.put("rollcall.discovery.cache.max-wait", "1s");
        return RollcallConfig.of(m);
    }

    private void register(int i) throws Exception {
        try (Client client = Client.builder().endpoints(etcd.endpoint()).build()) {
            client.getKVClient().put(bytes(PREFIX + "w" + i), bytes(fleet.worker(i).endpoint().url()))
                    .get(10, TimeUnit.SECONDS);
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private static TreeSet<String> urls(Iterable<WorkerEndpoint> endpoints) {
        TreeSet<String> s = new TreeSet<>();
        endpoints.forEach(e -> s.add(e.url()));
        return s;
    }

    @Test
    void aCoordinatorStartingWhileEtcdIsDownServesTheCachedSetUntilEtcdAnswers() throws Exception {
        Path cache = dir.resolve("candidates");
        for (int i = 0; i < 3; i++) {
            register(i);
        }
        try (WorkerResolver first = WorkerResolver.fromConfig(config(cache))) {
            first.awaitWorkers(3, WAIT);
            await().atMost(WAIT).until(() -> Files.exists(cache) && Files.readString(cache).contains("end 3 "));
        }

        etcd.stop();
        try (WorkerResolver second = WorkerResolver.fromConfig(config(cache))) {
            FleetSnapshot fromCache = second.awaitWorkers(3, WAIT);
            assertThat(urls(fromCache.compatibleEndpoints())).isEqualTo(urls(fleet.endpoints()));
            assertThat(fromCache.staleSince()).as("stale since the file was written").isPresent();
            assertThat(fromCache.discoveryProblem()).hasValueSatisfying(p -> assertThat(p)
                    .contains("serving the last-known-good candidates of " + cache));

            etcd.restart();
            WorkerEndpoint w0 = fleet.worker(0).endpoint();
            try (Client client = Client.builder().endpoints(etcd.endpoint()).build()) {
                client.getKVClient().delete(bytes(PREFIX + "w1")).get(10, TimeUnit.SECONDS);
                client.getKVClient().delete(bytes(PREFIX + "w2")).get(10, TimeUnit.SECONDS);
            }
            FleetSnapshot live = second.await(s -> s.staleSince().isEmpty() && s.counts().candidates() == 1, WAIT);
            assertThat(urls(live.compatibleEndpoints())).containsExactly(w0.url());
            assertThat(live.discoveryProblem()).isEmpty();
        }
    }
}
