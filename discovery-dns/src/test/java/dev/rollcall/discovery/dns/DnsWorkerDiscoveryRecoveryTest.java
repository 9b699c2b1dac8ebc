package dev.rollcall.discovery.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.testkit.dns.DnsServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The DNS server fails (SERVFAIL) or stops answering, and comes back: the last set is kept, marked
 * stale, never replaced by an empty one; the first answer after it is published with every change.
 */
class DnsWorkerDiscoveryRecoveryTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String NAME = "workers.rollcall.test.";

    private DnsServer dns;
    private DnsWorkerDiscovery discovery;
    private final CandidateRecorder listener = new CandidateRecorder();

    @BeforeEach
    void startDns() {
        dns = DnsServer.start("rollcall.test.");
    }

    @AfterEach
    void stopAll() {
        if (discovery != null) {
            discovery.close();
        }
        if (dns != null) {
            dns.close();
        }
    }

    private void startDiscovery() {
        discovery = (DnsWorkerDiscovery) new DnsWorkerDiscoveryProvider().create(DnsSettingsTest.settings(Map.of(
                "name", NAME, "port", "7001", "server", dns.address(),
                "min-interval", "100ms", "max-interval", "1s", "timeout", "300ms")));
        discovery.start(listener);
    }

    private void awaitLatest(Set<WorkerEndpoint> expected) {
        await().atMost(WAIT).untilAsserted(() -> assertThat(listener.latest()).isEqualTo(expected));
    }

    @Test
    void aServfailKeepsTheLastSetStaleAndTheFirstAnswerAfterItHasEveryChangeMadeMeanwhile() {
        dns.add(NAME, "A", 1, "127.0.0.1");
        dns.add(NAME, "A", 1, "127.0.0.2");
        startDiscovery();
        Set<WorkerEndpoint> before = Set.of(WorkerEndpoint.of("127.0.0.1", 7001), WorkerEndpoint.of("127.0.0.2", 7001));
        awaitLatest(before);

        dns.failZone();
        await().atMost(WAIT).until(listener::stale);
        assertThat(listener.errors().get(0)).hasMessageContaining("SERVFAIL").hasMessageContaining(NAME);
        int setsDuringOutage = listener.sets().size();

        dns.restoreZone();
        // The zone comes back with the set changed during the outage: one update, both records. Two
        // updates were two sets (a poll every 100 ms read the zone between them: [.2], then [.2, .3]).
        dns.replace(NAME, "A", 1, List.of("127.0.0.2", "127.0.0.3"));

        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.2", 7001), WorkerEndpoint.of("127.0.0.3", 7001)));
        assertThat(listener.stale()).isFalse();
        assertThat(listener.sets()).as("never an empty set, nothing between the old and the new set")
                .hasSize(setsDuringOutage + 1).doesNotContain(Set.of());
    }

    @Test
    void changesMadeRightAfterTheServerRestartsAreApplied() {
        dns.add(NAME, "A", 1, "127.0.0.5");
        startDiscovery();
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.5", 7001)));

        dns.stop();
        await().atMost(WAIT).until(listener::stale);
        dns.restart();
        dns.delete(NAME, "A", "127.0.0.5");
        dns.add(NAME, "A", 1, "127.0.0.6");

        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.6", 7001)));
        assertThat(listener.stale()).isFalse();
    }
}
