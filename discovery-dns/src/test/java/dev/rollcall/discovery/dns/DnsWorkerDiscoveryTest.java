package dev.rollcall.discovery.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.testkit.dns.DnsServer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** Lookups against a real DNS server (Knot) whose records the tests edit: what the backend publishes. */
class DnsWorkerDiscoveryTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static DnsServer dns;

    private String name;       // this test's own name in the zone
    private DnsWorkerDiscovery discovery;
    private final CandidateRecorder listener = new CandidateRecorder();

    @BeforeAll
    static void startDns() {
        dns = DnsServer.start("rollcall.test.");
    }

    @AfterAll
    static void stopDns() {
        if (dns != null) {
            dns.close();
        }
    }

    @BeforeEach
    void namePerTest(TestInfo test) {
        name = test.getTestMethod().orElseThrow().getName().toLowerCase(Locale.ROOT) + ".rollcall.test.";
    }

    @AfterEach
    void closeDiscovery() {
        if (discovery != null) {
            discovery.close();
        }
    }

    private DnsWorkerDiscovery start(Map<String, String> extra) {
        Map<String, String> keys = new LinkedHashMap<>(Map.of("name", name, "server", dns.address(),
                "min-interval", "100ms", "max-interval", "1s", "timeout", "500ms"));
        keys.putAll(extra);
        discovery = (DnsWorkerDiscovery) new DnsWorkerDiscoveryProvider().create(DnsSettingsTest.settings(keys));
        discovery.start(listener);
        return discovery;
    }

    private void awaitLatest(Set<WorkerEndpoint> expected) {
        await().atMost(WAIT).untilAsserted(() -> assertThat(listener.latest()).isEqualTo(expected));
    }

    private static WorkerEndpoint srv(String host, int port, int priority, int weight, String target) {
        return new WorkerEndpoint(host, port, false, Map.of(DnsLookup.PRIORITY_LABEL, Integer.toString(priority),
                DnsLookup.WEIGHT_LABEL, Integer.toString(weight), DnsLookup.TARGET_LABEL, target));
    }

    @Test
    void publishesTheARecordsOfTheNameWithTheConfiguredPortAndScheme() {
        dns.add(name, "A", 5, "127.0.0.11");
        dns.add(name, "A", 5, "127.0.0.12");

        start(Map.of("port", "7001", "scheme", "grpcs"));

        awaitLatest(Set.of(new WorkerEndpoint("127.0.0.11", 7001, true, Map.of()),
                new WorkerEndpoint("127.0.0.12", 7001, true, Map.of())));
        assertThat(listener.errors()).isEmpty();
        assertThat(discovery.description()).isEqualTo("dns[A " + name + " port 7001 on " + dns.address()
                + ", 2 workers]");
    }

    @Test
    void publishesAaaaRecords() {
        dns.add(name, "AAAA", 5, "::1");

        start(Map.of("record-type", "AAAA", "port", "7001"));

        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://[::1]:7001")));
    }

    @Test
    void carriesSrvPriorityWeightAndTargetAsLabelsAndResolvesTheTargets() {
        String w1 = "w1." + name;
        String w2 = "w2." + name;
        dns.add(w1, "A", 5, "127.0.0.21");
        dns.add(w2, "A", 5, "127.0.0.22");
        dns.add(w2, "AAAA", 5, "::1");
        dns.add(name, "SRV", 5, "10 60 7001 " + w1);
        dns.add(name, "SRV", 20, "20 0 7002 " + w2);

        start(Map.of("record-type", "SRV"));

        String t1 = w1.substring(0, w1.length() - 1);
        String t2 = w2.substring(0, w2.length() - 1);
        awaitLatest(Set.of(srv("127.0.0.21", 7001, 10, 60, t1), srv("127.0.0.22", 7002, 20, 0, t2),
                srv("::1", 7002, 20, 0, t2)));
        assertThat(listener.latest()).allSatisfy(e -> assertThat(e.labels()).containsKeys("srv.priority", "srv.weight"));
    }

    @Test
    void publishesTheFullSetAfterARecordIsAddedChangedOrRemoved() {
        dns.add(name, "A", 1, "127.0.0.31");
        start(Map.of("port", "7001"));
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.31", 7001)));

        dns.add(name, "A", 1, "127.0.0.32");
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.31", 7001), WorkerEndpoint.of("127.0.0.32", 7001)));

        dns.replace(name, "A", 1, List.of("127.0.0.33"));
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.33", 7001)));

        assertThat(listener.errors()).isEmpty();
        assertThat(listener.sets()).as("one publish per change, none while nothing changed").hasSize(3);
    }

    @Test
    void noRecordsLeftIsAnEmptySetWhenTheServerSaysSo() {
        dns.add(name, "A", 1, "127.0.0.51");
        dns.add(name, "TXT", 1, "\"keeps-the-name\"");
        start(Map.of("port", "7001"));
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.51", 7001)));

        dns.delete(name, "A"); // the name stays (its TXT record): NOERROR with no A record, not NXDOMAIN
        awaitLatest(Set.of());

        assertThat(listener.errors()).as("no records is an answer, not a failure").isEmpty();
    }

    @Test
    void aChangedSrvWeightIsPublishedAsAChangedLabel() {
        String w = "w." + name;
        dns.add(w, "A", 5, "127.0.0.41");
        dns.add(name, "SRV", 1, "10 10 7001 " + w);
        start(Map.of("record-type", "SRV"));
        String target = w.substring(0, w.length() - 1);
        awaitLatest(Set.of(srv("127.0.0.41", 7001, 10, 10, target)));

        dns.replace(name, "SRV", 1, List.of("5 90 7001 " + w));

        await().atMost(WAIT).untilAsserted(() -> assertThat(listener.latest()).singleElement()
                .satisfies(e -> assertThat(e.labels()).containsEntry("srv.priority", "5").containsEntry("srv.weight", "90")));
    }

    @Test
    void aNameThatDoesNotExistIsAnErrorNeverAnEmptySet() {
        start(Map.of("port", "7001"));

        await().atMost(WAIT).until(() -> listener.errors().size() >= 2);
        assertThat(listener.sets()).isEmpty();
        assertThat(listener.errors().get(0)).hasMessageContaining("NXDOMAIN").hasMessageContaining(name)
                .hasMessageContaining(dns.address());

        dns.add(name, "A", 1, "127.0.0.61");
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.61", 7001)));
    }

    @Test
    void skipsAnSrvRecordWhoseTargetHasNoAddressAndPublishesTheOthers() {
        String good = "good." + name;
        dns.add(good, "A", 5, "127.0.0.71");
        dns.add(name, "SRV", 5, "10 10 7001 " + good);
        dns.add(name, "SRV", 5, "10 10 7002 missing." + name);
        dns.add(name, "SRV", 5, "10 10 0 " + good);

        start(Map.of("record-type", "SRV"));

        awaitLatest(Set.of(srv("127.0.0.71", 7001, 10, 10, good.substring(0, good.length() - 1))));
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void looksUpAgainOnTheRecordsTtlClampedToTheIntervals() {
        dns.add(name, "A", 3, "127.0.0.81");
        start(Map.of("port", "7001", "min-interval", "1s", "max-interval", "5s"));
        awaitLatest(Set.of(WorkerEndpoint.of("127.0.0.81", 7001)));
        await().atMost(WAIT).untilAsserted(() -> assertThat(discovery.lastDelay()).isEqualTo(Duration.ofSeconds(3)));

        dns.replace(name, "A", 3600, List.of("127.0.0.81"));
        await().atMost(WAIT).untilAsserted(() -> assertThat(discovery.lastDelay()).isEqualTo(Duration.ofSeconds(5)));

        dns.replace(name, "A", 0, List.of("127.0.0.81"));
        await().atMost(WAIT).untilAsserted(() -> assertThat(discovery.lastDelay()).isEqualTo(Duration.ofSeconds(1)));
        assertThat(listener.sets()).as("the same answer is not published again").hasSize(1);
    }
}
