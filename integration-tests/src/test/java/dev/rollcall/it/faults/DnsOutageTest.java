package dev.rollcall.it.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.dns.DnsServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The dns backend's server failing (SERVFAIL) and then stopped, under a resolver configured as a
 * user would configure it: the last set is served and marked stale, never emptied; afterwards the
 * records as they are then arrive and the mark is cleared.
 */
class DnsOutageTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String NAME = "_grpc._tcp.workers.rollcall.test.";
    private static final String TARGET = "host.rollcall.test.";

    private DnsServer dns;
    private WorkerFleet fleet;
    private WorkerResolver resolver;

    @BeforeEach
    void start() {
        dns = DnsServer.start("rollcall.test.");
        fleet = WorkerFleet.start("1.0.0", "1.0.0", "1.0.0");
    }

    @AfterEach
    void stop() {
        if (resolver != null) {
            resolver.close();
        }
        fleet.close();
        dns.close();
    }

    private void publish(List<WorkerEndpoint> workers) {
        dns.add(TARGET, "A", 1, "127.0.0.1");
        dns.replace(NAME, "SRV", 1, workers.stream().map(w -> "10 10 " + w.port() + " " + TARGET).toList());
    }

    private static Set<String> urls(Iterable<WorkerEndpoint> endpoints) {
        Set<String> s = new TreeSet<>();
        endpoints.forEach(e -> s.add(e.url()));
        return s;
    }

    private WorkerEndpoint w(int i) {
        return fleet.worker(i).endpoint();
    }

    @Test
    void servesTheLastSetMarkedStaleWhileDnsFailsAndAppliesTheRecordsFoundAfterwards() throws Exception {
        publish(List.of(w(0), w(1), w(2)));
        resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "dns",
                "rollcall.discovery.dns.name", NAME,
                "rollcall.discovery.dns.record-type", "SRV",
                "rollcall.discovery.dns.server", dns.address(),
                "rollcall.discovery.dns.min-interval", "200ms",
                "rollcall.discovery.dns.max-interval", "1s",
                "rollcall.discovery.dns.timeout", "500ms",
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0")));
        FleetSnapshot before = resolver.awaitWorkers(3, WAIT);
        assertThat(before.staleSince()).isEmpty();

        dns.failZone();   // SERVFAIL

        FleetSnapshot stale = resolver.await(s -> s.staleSince().isPresent(), WAIT);
        assertThat(urls(stale.compatibleEndpoints())).isEqualTo(urls(fleet.endpoints()));

        dns.stop();       // and then no answer at all
        dns.restart();
        dns.restoreZone();
        WorkerEndpoint joined = fleet.addWorker("1.1.0").endpoint();
        publish(List.of(w(1), joined));

        FleetSnapshot after = resolver.await(s -> s.staleSince().isEmpty()
                && s.counts().candidates() == 2 && s.counts().compatible() == 2, WAIT);
        assertThat(urls(after.compatibleEndpoints())).isEqualTo(urls(List.of(w(1), joined)));
        assertThat(after.status(w(0).url())).isEmpty();
        assertThat(after.version(joined.url())).contains("1.1.0");
    }
}
