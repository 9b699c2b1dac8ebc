package dev.rollcall.discovery.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.testkit.dns.DnsServer;
import dev.rollcall.testkit.faults.DatagramFaultProxy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Type;

/**
 * An SRV lookup whose targets are not in the answer's additional section (here: each target is a
 * CNAME, so Knot adds none) costs two more questions per target. Asked one after the other, each
 * with its own timeout, 10 targets cost 21 round trips, and a server that answers each just within
 * the timeout made the lookup last 21 timeouts: it had no deadline. Now they go 16 at a time, and
 * {@code lookup-timeout} bounds the whole lookup.
 */
class DnsLookupDeadlineTest {

    private static final String ZONE = "rollcall.test.";
    private static final String NAME = "_grpc._tcp.deadline." + ZONE;
    private static final int TARGETS = 10;
    private static final String LOOKUP_TIMEOUT_KEY = "rollcall.discovery.dns.lookup-timeout";

    private static DnsServer dns;

    private DatagramFaultProxy proxy;
    private DnsWorkerDiscovery discovery;
    private final CandidateRecorder listener = new CandidateRecorder();

    @BeforeAll
    static void startDns() {
        dns = DnsServer.start(ZONE);
        List<String> srv = new ArrayList<>();
        for (int i = 1; i <= TARGETS; i++) {
            dns.add("h-" + i + "." + ZONE, "A", 1, "127.0.5." + i);
            dns.add("w-" + i + "." + ZONE, "CNAME", 1, "h-" + i + "." + ZONE);
            srv.add("10 10 7001 w-" + i + "." + ZONE);
        }
        dns.replace(NAME, "SRV", 1, srv);
    }

    @AfterAll
    static void stopDns() {
        if (dns != null) {
            dns.close();
        }
    }

    @BeforeEach
    void startProxy() {
        proxy = DatagramFaultProxy.to(dns.port());
    }

    @AfterEach
    void closeAll() {
        if (discovery != null) {
            discovery.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    /** Each question {@code timeout}, the whole lookup 2 s; through a UDP proxy in front of Knot. */
    private void start(String timeout) {
        Map<String, String> keys = new LinkedHashMap<>(Map.of("name", NAME, "record-type", "SRV",
                "server", "127.0.0.1:" + proxy.port(), "min-interval", "100ms", "max-interval", "500ms",
                "timeout", timeout, "lookup-timeout", "2s"));
        discovery = (DnsWorkerDiscovery) new DnsWorkerDiscoveryProvider().create(DnsSettingsTest.settings(keys));
        discovery.start(listener);
    }

    private static boolean isFollowUp(byte[] datagram) {
        try {
            return new Message(datagram).getQuestion().getType() != Type.SRV;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * 150 ms each way: one after the other, the 21 questions take 6.3 s, three times the lookup's
     * deadline; 16 at a time, three round trips, under a second.
     */
    @Test
    void aServerThatAnswersEveryQuestionSlowlyStillGivesTheWholeSetWithinTheLookupTimeout() {
        proxy.delay(Duration.ofMillis(150));
        start("1s");

        // The deadline is what this test is about: the set must come within lookup-timeout (plus slack for a busy machine).
        await().atMost(Duration.ofSeconds(4)).untilAsserted(() -> assertThat(listener.latest()).hasSize(TARGETS));
        assertThat(listener.errors()).as("no lookup ran past its deadline").isEmpty();
    }

    /**
     * 400 ms each way, every answer well within the 2 s a question may take: one after the other
     * the lookup took 17 s and never failed; now its third round trip runs past the 2 s deadline,
     * and that is the error, naming the key, never a partial set.
     */
    @Test
    void aLookupWhoseAnswersComeTooSlowlyInAllFailsAtItsDeadlineNamingTheKey() {
        proxy.delay(Duration.ofMillis(400));
        start("2s");

        await().atMost(Duration.ofSeconds(5)).until(() -> !listener.errors().isEmpty());
        assertThat(listener.errors().get(0).getMessage()).contains(LOOKUP_TIMEOUT_KEY).contains("2000 ms")
                .contains("questions about SRV targets answered");
        assertThat(listener.sets()).as("a lookup cut short is no set").isEmpty();
    }

    @Test
    void aServerThatIgnoresTheFollowUpQuestionsIsAFailureAndTheLastSetStays() {
        start("1s");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(listener.latest()).hasSize(TARGETS));

        proxy.dropFromClients(DnsLookupDeadlineTest::isFollowUp);

        await().atMost(Duration.ofSeconds(5)).until(() -> !listener.errors().isEmpty());
        assertThat(listener.errors().get(0).getMessage()).contains("(target of SRV record").contains("no answer");
        assertThat(listener.sets()).as("the last good set stays").hasSize(1);

        proxy.pass();
        await().atMost(Duration.ofSeconds(10)).until(() -> !listener.stale());
        assertThat(listener.latest()).hasSize(TARGETS);
    }
}
