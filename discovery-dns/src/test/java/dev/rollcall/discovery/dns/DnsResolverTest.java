package dev.rollcall.discovery.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.dns.DnsServer;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A resolver configured as a user would, finding real workers through SRV records in a real DNS server. */
class DnsResolverTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aResolverFindsTheWorkersOfAnSrvNameAndFollowsARemoval() throws Exception {
        try (DnsServer dns = DnsServer.start("rollcall.test.");
             WorkerFleet fleet = WorkerFleet.start("1.4.0", "1.5.0", "2.0.0")) {
            dns.add("workers.rollcall.test.", "A", 1, "127.0.0.1");
            String name = "_grpc._tcp.workers.rollcall.test.";
            for (FleetWorker w : fleet.workers()) {
                dns.add(name, "SRV", 1, "10 " + w.endpoint().port() + " " + w.endpoint().port() + " workers.rollcall.test.");
            }
            RollcallConfig config = RollcallConfig.of(Map.of(
                    "rollcall.discovery.type", "dns",
                    "rollcall.discovery.dns.name", name,
                    "rollcall.discovery.dns.record-type", "SRV",
                    "rollcall.discovery.dns.server", dns.address(),
                    "rollcall.discovery.dns.min-interval", "200ms",
                    "rollcall.policy.type", "semver",
                    "rollcall.policy.semver.range", "^1.4.0"));

            try (WorkerResolver resolver = WorkerResolver.fromConfig(config)) {
                FleetSnapshot snapshot = resolver.awaitWorkers(2, WAIT);
                assertThat(snapshot.workers()).extracting(w -> w.version()).containsExactlyInAnyOrder("1.4.0", "1.5.0");
                FleetWorker first = fleet.worker(0);
                WorkerStatus status = snapshot.status("grpc://127.0.0.1:" + first.endpoint().port()).orElseThrow();
                assertThat(status.endpoint().labels()).containsEntry("srv.priority", "10")
                        .containsEntry("srv.weight", Integer.toString(first.endpoint().port()));

                dns.delete(name, "SRV", "10 " + first.endpoint().port() + " " + first.endpoint().port() + " workers.rollcall.test.");

                await().atMost(WAIT).until(() -> resolver.pin().status("grpc://127.0.0.1:" + first.endpoint().port()).isEmpty());
                assertThat(resolver.pin().workers()).extracting(w -> w.version()).containsExactly("1.5.0");
            }
        }
    }
}
