package dev.rollcall.discovery.etcd;

import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.testkit.ConsoleCapture;
import dev.rollcall.local.WorkerFleet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.local.etcd.EtcdServer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The watch against a real etcd, what only etcd has: the prefix boundary, JSON values, two keys
 * naming one worker, values that turn bad. What every backend promises is in
 * {@link EtcdWorkerDiscoveryContractTest}.
 */
class EtcdWorkerDiscoveryTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static EtcdServer server;
    private static Etcd etcd;

    private String prefix;
    private WorkerDiscovery discovery;
    private final CandidateRecorder listener = new CandidateRecorder();

    @BeforeAll
    static void startEtcd() {
        server = EtcdServer.start();
        etcd = new Etcd(server);
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd != null) {
            etcd.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void prefixPerTest(TestInfo test) {
        prefix = "/test/" + test.getTestMethod().orElseThrow().getName() + "/";
    }

    @AfterEach
    void closeDiscovery() {
        if (discovery != null) {
            discovery.close();
        }
    }

    private WorkerDiscovery start(Map<String, String> extra) {
        Map<String, String> keys = new LinkedHashMap<>(Map.of("endpoints", server.endpoint(), "prefix", prefix));
        keys.putAll(extra);
        discovery = new EtcdWorkerDiscoveryProvider().create(Etcd.settings(keys));
        discovery.start(listener);
        return discovery;
    }

    private void awaitLatest(Set<WorkerEndpoint> expected) {
        await().atMost(WAIT).untilAsserted(() -> assertThat(listener.latest()).isEqualTo(expected));
    }

    @Test
    void publishesTheWorkersAlreadyUnderThePrefixAtStart() {
        etcd.put(prefix + "w1", "grpc://127.0.0.1:7001");
        etcd.put(prefix + "w2", "{\"endpoint\":\"grpcs://127.0.0.2:7002\",\"labels\":{\"zone\":\"eu-1\"},"
                + "\"version\":\"1.4.0\"}");
        etcd.put(prefix.substring(0, prefix.length() - 1) + "-other/w3", "grpc://127.0.0.3:7003");

        start(Map.of());

        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.0.1:7001"),
                WorkerEndpoint.parse("grpcs://127.0.0.2:7002").withLabels(Map.of("zone", "eu-1",
                        WorkerEndpoint.VERSION_LABEL, "1.4.0"))));
        assertThat(listener.sets()).as("the first set is already complete").hasSize(1);
        assertThat(listener.errors()).isEmpty();
        assertThat(discovery.description()).isEqualTo("etcd[" + server.endpoint() + ", prefix=" + prefix + ", 2 workers]");
    }

    @Test
    void aRewrittenValueReplacesTheWorkerItNamed() {
        etcd.put(prefix + "b", "grpc://127.0.1.2:7001");
        start(Map.of());
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.1.2:7001")));

        etcd.put(prefix + "b", "{\"endpoint\":\"grpc://127.0.1.2:7001\",\"labels\":{\"zone\":\"b\"}}");

        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.1.2:7001").withLabels(Map.of("zone", "b"))));
        assertThat(listener.errors()).isEmpty();
    }

    /**
     * Watch responses are applied on jetcd's thread while the loop thread is idle; those that arrive
     * while it is busy are handed to it, and none overtakes another: the last write wins.
     */
    @Test
    void responsesThatArriveWhileTheLoopIsBusyAreAppliedInEtcdsOrder() throws Exception {
        etcd.put(prefix + "w", "grpc://127.0.4.1:7000");
        EtcdWorkerDiscovery d = (EtcdWorkerDiscovery) start(Map.of());
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.4.1:7000")));
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        d.onLoop(() -> {
            busy.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        busy.await();
        for (int i = 1; i <= 20; i++) {
            etcd.put(prefix + "w", "grpc://127.0.4.1:" + (7000 + i));
        }
        etcd.put(prefix + "x", "grpc://127.0.4.2:7000");
        etcd.delete(prefix + "x");
        await().atMost(WAIT).until(() -> d.responsesHandedOver() == 22);
        assertThat(listener.latest()).as("nothing applied while the loop is busy")
                .isEqualTo(Set.of(WorkerEndpoint.parse("grpc://127.0.4.1:7000")));

        release.countDown();
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.4.1:7020")));
        etcd.put(prefix + "y", "grpc://127.0.4.3:7000");
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.4.1:7020"), WorkerEndpoint.parse("grpc://127.0.4.3:7000")));
        assertThat(d.responsesHandedOver()).as("the loop idle again: applied where jetcd delivers it").isEqualTo(22);
    }

    @Test
    void aWorkerReRegisteredByANewProcessCarriesItsNewInstanceId() {
        etcd.put(prefix + "w", "{\"endpoint\":\"grpc://127.0.1.3:7001\",\"instance_id\":\"p-1\"}");
        start(Map.of());
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.1.3:7001")
                .withLabels(Map.of(WorkerEndpoint.INSTANCE_ID_LABEL, "p-1"))));

        // The worker restarted in place and registered again: the resolver re-probes on this alone.
        etcd.put(prefix + "w", "{\"endpoint\":\"grpc://127.0.1.3:7001\",\"instance_id\":\"p-2\"}");
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.1.3:7001")
                .withLabels(Map.of(WorkerEndpoint.INSTANCE_ID_LABEL, "p-2"))));
    }

    @Test
    void theVersionInAValueIsTheCandidatesClaimedVersionAndFollowsARewrite() {
        etcd.put(prefix + "w", "{\"endpoint\":\"grpc://127.0.1.4:7001\",\"version\":\"1.4.0\"}");
        start(Map.of());
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.1.4:7001")
                .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.4.0"))));

        etcd.put(prefix + "w", "{\"endpoint\":\"grpc://127.0.1.4:7001\",\"version\":\"1.5.0\"}");
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.1.4:7001")
                .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.5.0"))));

        etcd.put(prefix + "w", "{\"endpoint\":\"grpc://127.0.1.4:7001\",\"version\":\"\"}");
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.1.4:7001")));
    }

    @Test
    void aHostileVersionLeavesOutOnlyItsCandidateNamingTheKeyEscaped() {
        etcd.put(prefix + "good", "{\"endpoint\":\"grpc://127.0.1.5:7001\",\"version\":\"1.4.0\"}");
        try (ConsoleCapture console = new ConsoleCapture()) {
            etcd.put(prefix + "forged", "{\"endpoint\":\"grpc://127.0.1.6:7001\",\"version\":\"1.4.0\\nINFO forged\"}");
            etcd.put(prefix + "huge", "{\"endpoint\":\"grpc://127.0.1.7:7001\",\"version\":\"" + "9".repeat(5000) + "\"}");
            start(Map.of());
            awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.1.5:7001")
                    .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.4.0"))));

            if (ConsoleCapture.seesLogs()) {
                String log = console.text();
                assertThat(log).contains("etcd key " + prefix + "forged", "\"version\": the version '1.4.0\\nINFO forged'")
                        .doesNotContain("\nINFO forged");
                assertThat(log).contains("etcd key " + prefix + "huge", "5000 characters long (at most 256)")
                        .doesNotContain("9".repeat(300));
            }
        }
        assertThat(listener.errors()).as("a bad value is not an outage").isEmpty();
    }

    @Test
    void skipsAMalformedValueAndAppliesTheRest() {
        etcd.put(prefix + "good", "grpc://127.0.2.1:7001");
        etcd.put(prefix + "no-scheme", "127.0.2.2:7001");
        etcd.put(prefix + "bad-json", "{\"endpoint\": grpc://127.0.2.3:7001}");
        start(Map.of());
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.2.1:7001")));

        // One transaction, one watch response: the malformed value costs only itself.
        Map<String, String> batch = new LinkedHashMap<>();
        batch.put(prefix + "new", "grpc://127.0.2.4:7001");
        batch.put(prefix + "labels-not-strings", "{\"endpoint\":\"grpc://127.0.2.5:7001\",\"labels\":{\"n\":1}}");
        batch.put(prefix + "fixed", "grpc://127.0.2.6:7001");
        etcd.putAll(batch);
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.2.1:7001"), WorkerEndpoint.parse("grpc://127.0.2.4:7001"),
                WorkerEndpoint.parse("grpc://127.0.2.6:7001")));

        // A key whose value turns bad no longer names a worker; fixing it brings the worker back.
        etcd.put(prefix + "good", "not a url");
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.2.4:7001"), WorkerEndpoint.parse("grpc://127.0.2.6:7001")));
        etcd.put(prefix + "good", "grpc://127.0.2.1:7001");
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.2.1:7001"), WorkerEndpoint.parse("grpc://127.0.2.4:7001"),
                WorkerEndpoint.parse("grpc://127.0.2.6:7001")));
        assertThat(listener.errors()).as("bad values are not outages").isEmpty();
    }

    @Test
    void countsTwoKeysNamingOneWorkerOnce() {
        etcd.put(prefix + "old-id", "grpc://127.0.3.1:7001");
        etcd.put(prefix + "new-id", "http://127.0.3.1:7001/");
        start(Map.of());

        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.3.1:7001")));
        etcd.delete(prefix + "new-id");
        etcd.put(prefix + "other", "grpc://127.0.3.2:7001");
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.3.1:7001"), WorkerEndpoint.parse("grpc://127.0.3.2:7001")));
    }

    @Test
    void reportsAnUnreachableEtcdAndPublishesNothing() {
        String nowhere = "http://127.0.0.1:" + WorkerFleet.freeEndpoint().port();
        discovery = new EtcdWorkerDiscoveryProvider().create(Etcd.settings(Map.of(
                "endpoints", nowhere, "prefix", prefix, "connect-timeout", "1s", "request-timeout", "1s",
                "backoff.initial", "100ms", "backoff.max", "200ms")));

        java.io.PrintStream originalErr = System.err;
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            discovery.start(listener);
            await().atMost(WAIT).until(() -> !listener.errors().isEmpty());
        } finally {
            System.setErr(originalErr);
            originalErr.print(err.toString(java.nio.charset.StandardCharsets.UTF_8));
        }
        assertThat(listener.errors().get(0)).hasMessageContaining(nowhere).hasMessageContaining(prefix);
        assertThat(listener.sets()).as("an unreachable etcd does not mean there are no workers").isEmpty();
        // Not "keeping the last 0 workers": there never was a set to keep.
        assertThat(err.toString(java.nio.charset.StandardCharsets.UTF_8))
                .contains("no set was read from etcd since start-up").doesNotContain("keeping the last");
    }

    /**
     * etcd refuses nothing here, but gRPC refuses an answer larger than the client takes (64 MiB
     * by default, 64 KiB here): read in one range, 40 values of 3 KiB would fail whole and publish
     * nothing, ever. Read in pages (10 keys each, at one revision), every worker is there.
     */
    @Test
    void readsAPrefixLargerThanOneAnswerInPages() {
        Map<String, String> values = fortyWorkersOfThreeKibEach();
        etcd.putAll(values);
        EtcdSettings settings = EtcdSettings.read(Etcd.settings(Map.of("endpoints", server.endpoint(), "prefix", prefix,
                "page-size", "10"))).withMaxInboundBytes(64 << 10);
        EtcdWorkerDiscovery paged = new EtcdWorkerDiscovery(settings);
        discovery = paged;
        paged.start(listener);

        await().atMost(WAIT).untilAsserted(() -> assertThat(listener.latest()).hasSize(40));
        assertThat(listener.errors()).isEmpty();
        assertThat(paged.fullReadPages()).as("range requests of the first read").isEqualTo(4);

        // The watch follows from the revision the pages were read at.
        etcd.delete(prefix + "w-07");
        await().atMost(WAIT).untilAsserted(() -> assertThat(listener.latest()).hasSize(39));
    }

    /** A page that is still too large for one answer is asked again with half as many keys. */
    @Test
    void asksForFewerKeysWhenAPageIsLargerThanOneAnswer() {
        etcd.putAll(fortyWorkersOfThreeKibEach());
        EtcdSettings settings = EtcdSettings.read(Etcd.settings(Map.of("endpoints", server.endpoint(), "prefix", prefix,
                "page-size", "100"))).withMaxInboundBytes(64 << 10);
        EtcdWorkerDiscovery paged = new EtcdWorkerDiscovery(settings);
        discovery = paged;
        paged.start(listener);

        await().atMost(WAIT).untilAsserted(() -> assertThat(listener.latest()).hasSize(40));
        assertThat(listener.errors()).isEmpty();
        assertThat(paged.fullReadPages()).as("pages of 12 keys, the first size below 64 KiB").isEqualTo(4);
    }

    private Map<String, String> fortyWorkersOfThreeKibEach() {
        Map<String, String> values = new LinkedHashMap<>();
        String pad = "p".repeat(3000);
        for (int i = 0; i < 40; i++) {
            values.put(prefix + String.format("w-%02d", i), "{\"endpoint\":\"grpc://127.0.4." + (i + 1)
                    + ":7001\",\"labels\":{\"pad\":\"" + pad + "\"}}");
        }
        return values;
    }

    /** Only no answer is silence: an error status is etcd answering, and must not tear the watch down. */
    @Test
    void aSignOfLifeThatGetsAnErrorStatusIsAnAnswerOnlyADeadlineOrNoConnectionIsSilence() {
        assertThat(EtcdFailures.isSilence(new java.util.concurrent.CompletionException(
                io.grpc.Status.DEADLINE_EXCEEDED.asRuntimeException()))).isTrue();
        assertThat(EtcdFailures.isSilence(io.grpc.Status.UNAVAILABLE.asRuntimeException())).isTrue();
        assertThat(EtcdFailures.isSilence(new java.util.concurrent.TimeoutException())).isTrue();
        assertThat(EtcdFailures.isSilence(io.grpc.Status.PERMISSION_DENIED.asRuntimeException())).isFalse();
        assertThat(EtcdFailures.isSilence(io.grpc.Status.RESOURCE_EXHAUSTED.asRuntimeException())).isFalse();
    }
}
