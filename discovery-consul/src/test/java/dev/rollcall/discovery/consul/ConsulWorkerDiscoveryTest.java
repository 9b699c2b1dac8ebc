package dev.rollcall.discovery.consul;

import dev.rollcall.testkit.CandidateRecorder;
import static dev.rollcall.discovery.consul.ConsulScenarios.P;
import static dev.rollcall.discovery.consul.ConsulScenarios.SEEN;
import static dev.rollcall.discovery.consul.ConsulScenarios.urls;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.testkit.consul.ConsulStandIn;
import dev.rollcall.testkit.consul.RecordedRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour that needs the stand-in's hooks: an index that goes backwards or to zero, an
 * agent that goes away and comes back, a proxy that does not block, malformed instances, filters,
 * the ACL token. What every backend promises is in {@link ConsulWorkerDiscoveryContractTest}.
 */
class ConsulWorkerDiscoveryTest {

    private static final String SERVICE = "workers";

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private ConsulStandIn standIn;
    private TestAgent agent;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        if (standIn != null) {
            standIn.close();
        }
    }

    private ConsulStandIn standIn(ConsulStandIn.Builder builder, String token) {
        standIn = builder.start();
        agent = new TestAgent(standIn.address(), token);
        return standIn;
    }

    private ConsulWorkerDiscovery discovery(Map<String, String> keys) {
        Map<String, String> full = new HashMap<>();
        full.put(P + "address", standIn.address());
        full.put(P + "service", SERVICE);
        full.put(P + "backoff.initial", "100ms");
        full.put(P + "rate-limit.interval", "100ms");   // the tests change the service faster than every 15 s
        full.put(P + "backoff.max", "500ms");
        keys.forEach((k, v) -> full.put(P + k, v));
        ConsulWorkerDiscovery d = (ConsulWorkerDiscovery) new ConsulWorkerDiscoveryProvider()
                .create(Settings.of(full).scope(P));
        toClose.add(d);
        return d;
    }

    private ConsulWorkerDiscovery started(Map<String, String> keys, CandidateRecorder listener) {
        ConsulWorkerDiscovery d = discovery(keys);
        d.start(listener);
        return d;
    }

    private List<RecordedRequest> healthQueriesSince(Instant since) {
        return standIn.requests().stream()
                .filter(r -> r.path().equals("/v1/health/service/" + SERVICE) && !r.at().isBefore(since))
                .toList();
    }

    @Test
    void everyQueryAfterTheFirstBlocksOnTheLastIndexWithTheConfiguredWait() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of("wait", "7s"), listener);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));
        long indexOfA = standIn.index();
        agent.register(SERVICE, "b", "127.0.0.1", 7002);
        await().atMost(SEEN).until(() -> listener.latestUrls().size() == 2);
        await().atMost(SEEN).until(() -> standIn.healthQueries(SERVICE) >= 3);

        List<RecordedRequest> queries = standIn.requests().stream()
                .filter(r -> r.path().equals("/v1/health/service/" + SERVICE)).toList();
        assertThat(queries.get(0).queryParameter("index")).as("the first query does not block").isEmpty();
        assertThat(queries.get(1).queryParameter("index")).containsExactly(Long.toString(indexOfA));
        assertThat(queries.get(1).queryParameter("wait")).containsExactly("7s");
        assertThat(queries.get(2).queryParameter("index")).containsExactly(Long.toString(standIn.index()));
        assertThat(queries).allSatisfy(q -> assertThat(q.queryParameter("passing")).containsExactly("true"));
    }

    @Test
    void indexThatGoesBackwardsIsResetAndLaterChangesAreSeen() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        agent.register(SERVICE, "b", "127.0.0.1", 7002);
        agent.register(SERVICE, "c", "127.0.0.1", 7003);
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of("wait", "1s"), listener);
        await().atMost(SEEN).until(() -> listener.latestUrls() != null && listener.latestUrls().size() == 3);
        Instant rewound = Instant.now();

        // As after a snapshot restore: the server's index is now below the one the client holds.
        standIn.rewindIndex(1);
        agent.deregister("a");              // index 2, still below the client's

        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7002", "grpc://127.0.0.1:7003")
                .equals(listener.latestUrls()));
        await().atMost(SEEN).until(() -> healthQueriesSince(rewound).stream()
                .anyMatch(q -> q.queryParameter("index").isEmpty()));
        agent.register(SERVICE, "d", "127.0.0.1", 7004);   // index 3: only seen by a client that reset
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7002", "grpc://127.0.0.1:7003",
                "grpc://127.0.0.1:7004").equals(listener.latestUrls()));
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void indexZeroFromTheServerIsNeverSentBackSoQueriesStillBlock() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of("wait", "1s"), listener);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));

        standIn.rewindIndex(0);     // the old Consul bug: X-Consul-Index: 0
        await().atMost(SEEN).until(() -> standIn.requests().stream()
                .anyMatch(q -> q.queryParameter("index").equals(List.of("1"))));
        long base = standIn.healthQueries(SERVICE);

        // Index 0 does not block: sending it back would spin. With 1, each query waits its second.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5))
                .until(() -> standIn.healthQueries(SERVICE) - base <= 4);
        assertThat(standIn.requests()).noneMatch(q -> q.queryParameter("index").equals(List.of("0")));
    }

    @Test
    void backsOffWhenBlockingQueriesComeBackAtOnceWithoutChange() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        CandidateRecorder listener = new CandidateRecorder();
        ConsulWorkerDiscovery discovery = started(Map.of("wait", "5s", "backoff.initial", "200ms",
                "backoff.max", "1s"), listener);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));

        // A proxy that cuts long polls short: every blocking query returns at once, unchanged.
        standIn.answerBlockingQueriesAtOnce(true);
        long base = discovery.queriesSent();

        // Backing off 200 ms, 400 ms, 800 ms, then 1 s: a handful in 3 s, not thousands.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5))
                .until(() -> discovery.queriesSent() - base <= 10);
        agent.register(SERVICE, "b", "127.0.0.1", 7002);
        await().atMost(SEEN).until(() -> listener.latestUrls().size() == 2);
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void aServiceThatChangesOnEveryQueryIsQueriedAtTheRateLimitNotAsFastAsConsulAnswers() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        standIn.advanceIndexOnEveryQuery(true);     // every blocking query returns at once with a new index
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of("wait", "5s", "rate-limit.interval", "10m", "rate-limit.burst", "2"), listener);

        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));
        // The burst (2 queries) goes at once; the third waits ten minutes. Without the limit: thousands.
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
                .until(() -> standIn.healthQueries(SERVICE) <= 2);
        assertThat(standIn.healthQueries(SERVICE)).isEqualTo(2);
    }

    @Test
    void underSustainedChurnTheLoopDegradesToPollingAtTheIntervalAndStillSeesChanges() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        standIn.advanceIndexOnEveryQuery(true);
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of("wait", "5s", "rate-limit.interval", "200ms"), listener);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));

        agent.register(SERVICE, "b", "127.0.0.1", 7002);

        await().atMost(SEEN).until(() -> listener.latestUrls().size() == 2);
        await().atMost(SEEN).until(() -> standIn.healthQueries(SERVICE) >= 6);   // it keeps polling
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void entriesOnANodeWhoseNodeCheckIsCriticalAreLeftOutInBothModes() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        CandidateRecorder passingOnly = new CandidateRecorder();
        CandidateRecorder allStates = new CandidateRecorder();
        started(Map.of("wait", "2s"), passingOnly);
        started(Map.of("wait", "2s", "passing-only", "false"), allStates);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(passingOnly.latestUrls())
                && urls("grpc://127.0.0.1:7001").equals(allStates.latestUrls()));

        standIn.setNodeAlive(false);                  // serfHealth critical: the node's agent is gone
        await().atMost(SEEN).until(() -> urls().equals(passingOnly.latestUrls()) && urls().equals(allStates.latestUrls()));
        standIn.setNodeAlive(true);
        await().atMost(SEEN).until(() -> passingOnly.latestUrls().size() == 1 && allStates.latestUrls().size() == 1);

        agent.nodeMaintenance(true);                  // _node_maintenance, critical
        await().atMost(SEEN).until(() -> urls().equals(passingOnly.latestUrls()) && urls().equals(allStates.latestUrls()));
        agent.nodeMaintenance(false);
        await().atMost(SEEN).until(() -> passingOnly.latestUrls().size() == 1 && allStates.latestUrls().size() == 1);
        assertThat(passingOnly.errors()).isEmpty();
        assertThat(allStates.errors()).isEmpty();
    }

    @Test
    void resumesTheWatchWithItsIndexWhenTheAgentComesBack() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of("wait", "2s"), listener);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));
        long index = standIn.index();

        standIn.stop();
        await().atMost(SEEN).until(listener::stale);
        assertThat(listener.errors()).last().satisfies(e -> assertThat(e.getMessage())
                .contains("'" + SERVICE + "'").contains(standIn.address()).contains("cannot reach it"));
        Instant back = Instant.now();
        standIn.restart();

        // Nothing changed meanwhile: the same set is published once the resumed query answers,
        // which clears the resolver's stale mark.
        await().atMost(SEEN).until(() -> !listener.stale());
        assertThat(listener.latestUrls()).isEqualTo(urls("grpc://127.0.0.1:7001"));
        assertThat(healthQueriesSince(back)).first().satisfies(q -> {
            assertThat(q.queryParameter("index")).containsExactly(Long.toString(index));
            assertThat(q.queryParameter("wait")).as("a short wait: an unchanged set must not stay stale")
                    .containsExactly("1s");
        });

        agent.register(SERVICE, "b", "127.0.0.1", 7002);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001", "grpc://127.0.0.1:7002")
                .equals(listener.latestUrls()));
    }

    @Test
    void sendsTheFilterExpressionAndTheConsistencyModeWithEveryQuery() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001, List.of("prod"), Map.of("zone", "eu-1"), null, null);
        agent.register(SERVICE, "b", "127.0.0.1", 7002, List.of("prod"), Map.of("zone", "eu-2"), null, null);
        CandidateRecorder inZone = new CandidateRecorder();
        started(Map.of("wait", "1s", "filter", "Service.Meta.zone == \"eu-1\" and \"prod\" in Service.Tags",
                "consistency", "stale"), inZone);

        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(inZone.latestUrls()));
        agent.register(SERVICE, "c", "127.0.0.1", 7003, List.of("prod"), Map.of("zone", "eu-1"), null, null);
        await().atMost(SEEN).until(() -> inZone.latestUrls().size() == 2);

        List<RecordedRequest> queries = standIn.requests().stream()
                .filter(r -> r.path().equals("/v1/health/service/" + SERVICE)).toList();
        assertThat(queries).allSatisfy(q -> {
            assertThat(q.queryParameter("filter"))
                    .containsExactly("Service.Meta.zone == \"eu-1\" and \"prod\" in Service.Tags");
            assertThat(q.queryParameter("stale")).containsExactly("");
            assertThat(q.queryParameter("consistent")).isEmpty();
        });
        assertThat(inZone.errors()).isEmpty();
    }

    @Test
    void aFilterConsulRefusesIsReportedWithConsulsReason() {
        standIn(ConsulStandIn.builder(), null);
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of("filter", "Service.NoSuchField == 1", "consistency", "consistent"), listener);

        await().atMost(SEEN).until(() -> !listener.errors().isEmpty());
        assertThat(listener.errors().get(0).getMessage()).contains("HTTP 400")
                .contains("Failed to create boolean expression evaluator");
        assertThat(listener.sets()).isEmpty();
    }

    @Test
    void skipsAMalformedInstanceAndPublishesTheRest() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        standIn.injectRawInstance(SERVICE, """
                {"Node":{"Node":"node-9","Address":"127.0.0.9"},
                 "Service":{"ID":"port-is-text","Service":"workers","Port":"seven thousand"},"Checks":[]}""");
        CandidateRecorder listener = new CandidateRecorder();
        String log;
        try (LogCapture capture = new LogCapture()) {
            started(Map.of(), listener);
            await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));

            // Another bad one next to a good change: the good change is applied.
            standIn.injectRawInstance(SERVICE, """
                    {"Node":{"Node":"node-8","Address":""},"Service":{"ID":"nowhere","Service":"workers","Port":7008}}""");
            agent.register(SERVICE, "b", "127.0.0.1", 7002);
            await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001", "grpc://127.0.0.1:7002")
                    .equals(listener.latestUrls()));
            log = capture.text();
        }
        assertThat(listener.errors()).isEmpty();
        assertThat(log).contains("service ID 'port-is-text' on node 'node-9'")
                .contains("does not match Consul's health entry format")
                .contains("service ID 'nowhere' on node 'node-8'")
                .contains("neither a service address nor a node address");
        assertThat(log.lines().filter(l -> l.contains(" WARN ") && l.contains("port-is-text")))
                .as("warned about once, not on every answer").hasSize(1);
    }

    @Test
    void theVersionMetaIsTheCandidatesClaimFollowsAReRegistrationAndAHostileOneCostsOnlyItsInstance() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001, List.of(), Map.of("version", "1.4.0"), null, null);
        agent.register(SERVICE, "forged", "127.0.0.1", 7002, List.of(), Map.of("version", "1.4.0\\r\\nforged"),
                null, null);
        CandidateRecorder listener = new CandidateRecorder();
        String log;
        try (LogCapture capture = new LogCapture()) {
            started(Map.of(), listener);
            await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));
            assertThat(listener.latest().iterator().next().labels()).containsEntry(WorkerEndpoint.VERSION_LABEL, "1.4.0");

            agent.register(SERVICE, "a", "127.0.0.1", 7001, List.of(), Map.of("version", "1.5.0"), null, null);
            await().atMost(SEEN).untilAsserted(() -> assertThat(listener.latest()).singleElement()
                    .satisfies(e -> assertThat(e.labels()).containsEntry(WorkerEndpoint.VERSION_LABEL, "1.5.0")));
            log = capture.text();
        }
        assertThat(listener.errors()).isEmpty();
        assertThat(log).contains("service ID 'forged' on node", "its meta version: the version '1.4.0\\r\\nforged'")
                .doesNotContain("\nforged");
    }

    @Test
    void anotherVersionMetaKeyIsReadAndNoneReadsNoClaim() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001, List.of(), Map.of("version", "1.4.0", "build", "7"), null, null);
        CandidateRecorder byBuild = new CandidateRecorder();
        CandidateRecorder none = new CandidateRecorder();
        started(Map.of("version-meta", "build"), byBuild);
        started(Map.of("version-meta", "none"), none);

        await().atMost(SEEN).until(() -> byBuild.latest() != null && none.latest() != null);
        assertThat(byBuild.latest()).singleElement()
                .satisfies(e -> assertThat(e.labels()).containsEntry(WorkerEndpoint.VERSION_LABEL, "7"));
        assertThat(none.latest()).singleElement()
                .satisfies(e -> assertThat(e.labels()).doesNotContainKey(WorkerEndpoint.VERSION_LABEL));
    }

    @Test
    void publishesServiceAddressOrElseNodeAddressWithTagsAndMetaAsLabels() {
        standIn(ConsulStandIn.builder().nodeAddress("127.0.0.7").nodeName("node-7").datacenter("eu1"), null);
        agent.register(SERVICE, "own-address", "10.1.2.3", 7001, List.of("blue", "zone-a"),
                Map.of("zone", "eu-1a"), null, null);
        agent.register(SERVICE, "node-address", null, 7002, List.of(), Map.of("rollcall-scheme", "grpcs"), null, null);
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of(), listener);

        await().atMost(SEEN).until(() -> urls("grpc://10.1.2.3:7001", "grpcs://127.0.0.7:7002")
                .equals(listener.latestUrls()));
        WorkerEndpoint own = listener.latest().stream().filter(e -> e.port() == 7001).findFirst().orElseThrow();
        assertThat(own.labels()).containsEntry("consul.service-id", "own-address")
                .containsEntry("consul.node", "node-7")
                .containsEntry("consul.datacenter", "eu1")
                .containsEntry("consul.tags", "blue,zone-a")
                .containsEntry("zone", "eu-1a");
        WorkerEndpoint onNode = listener.latest().stream().filter(e -> e.port() == 7002).findFirst().orElseThrow();
        assertThat(onNode.tls()).isTrue();
        assertThat(onNode.labels()).doesNotContainKey("rollcall-scheme").doesNotContainKey("consul.tags");
    }

    @Test
    void filtersByTagsNodeMetaAndDatacenter() {
        standIn(ConsulStandIn.builder().nodeMeta(Map.of("zone", "eu-1", "rack", "r 7&8")).datacenter("dc1"), null);
        agent.register(SERVICE, "prod", "127.0.0.1", 7001, List.of("prod", "gpu x&y"), Map.of(), null, null);
        agent.register(SERVICE, "canary", "127.0.0.1", 7002, List.of("canary"), Map.of(), null, null);
        CandidateRecorder prod = new CandidateRecorder();
        CandidateRecorder gpu = new CandidateRecorder();
        CandidateRecorder inZone = new CandidateRecorder();
        CandidateRecorder otherZone = new CandidateRecorder();
        CandidateRecorder ownDc = new CandidateRecorder();
        CandidateRecorder otherDc = new CandidateRecorder();
        started(Map.of("tag", "prod"), prod);
        started(Map.of("tag", "prod,gpu x&y"), gpu);
        started(Map.of("node-meta", "zone:eu-1,rack:r 7&8"), inZone);
        started(Map.of("node-meta", "zone:us-2"), otherZone);
        started(Map.of("datacenter", "dc1"), ownDc);
        started(Map.of("datacenter", "dc2"), otherDc);

        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(prod.latestUrls()));
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(gpu.latestUrls()));
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001", "grpc://127.0.0.1:7002")
                .equals(inZone.latestUrls()));
        await().atMost(SEEN).until(() -> urls().equals(otherZone.latestUrls()));
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001", "grpc://127.0.0.1:7002")
                .equals(ownDc.latestUrls()));
        await().atMost(SEEN).until(() -> !otherDc.errors().isEmpty());
        assertThat(otherDc.errors().get(0).getMessage()).contains("HTTP 500").contains("No path to datacenter");
        assertThat(otherDc.sets()).isEmpty();
    }

    @Test
    void sendsTheAclTokenAsAHeaderOnlyAndNeverLogsIt() {
        String token = "s3cr3t-" + UUID.randomUUID();
        standIn(ConsulStandIn.builder().aclToken(token), token);
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        String log;
        String descriptions;
        try (LogCapture capture = new LogCapture()) {
            CandidateRecorder listener = new CandidateRecorder();
            ConsulWorkerDiscovery discovery = started(Map.of("token", token, "wait", "1s"), listener);
            await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));

            // The worker side too: register, heartbeat, deregister.
            Map<String, String> keys = Map.of(P + "address", standIn.address(), P + "service", SERVICE,
                    P + "token", token, P + "registration.check-ttl", "1s");
            WorkerRegistration registration = new ConsulRegistrationProvider().create(
                    WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 7002), "1.0.0"), Settings.of(keys).scope(P));
            registration.start();
            await().atMost(SEEN).until(() -> listener.latestUrls().size() == 2);
            await().atMost(SEEN).until(() -> standIn.requestCount(r -> r.path().startsWith("/v1/agent/check/pass/")) >= 2);
            descriptions = discovery.description() + discovery + registration.description() + registration;
            registration.close();

            // And a failure path: queries that fail while the agent is away.
            standIn.stop();
            await().atMost(SEEN).until(listener::stale);
            standIn.restart();
            await().atMost(SEEN).until(() -> !listener.stale());
            log = capture.text();
            assertThat(capture.julRecordCount()).as("consul-api and HttpClient logged at their finest").isPositive();
        }

        List<RecordedRequest> ours = standIn.requests().stream()
                .filter(r -> r.header("User-Agent").orElse("").startsWith("rollcall-discovery-consul")).toList();
        assertThat(ours).isNotEmpty().allSatisfy(r -> {
            assertThat(r.tokenHeader()).contains(token);
            assertThat(r.tokenInUrl()).as("token in the URL of %s", r).isFalse();
        });
        assertThat(ours).anyMatch(r -> r.path().equals("/v1/agent/service/register"))
                .anyMatch(r -> r.path().startsWith("/v1/agent/check/pass/"))
                .anyMatch(r -> r.path().startsWith("/v1/agent/service/deregister/"));
        assertThat(log).contains("consul").doesNotContain(token);
        assertThat(descriptions).doesNotContain(token);
    }

    @Test
    void reportsAnUnknownTokenWithoutNamingIt() {
        String token = "right-" + UUID.randomUUID();
        standIn(ConsulStandIn.builder().aclToken(token), token);
        CandidateRecorder wrong = new CandidateRecorder();
        started(Map.of("token", "wrong-" + token), wrong);

        await().atMost(SEEN).until(() -> !wrong.errors().isEmpty());
        assertThat(wrong.errors().get(0).getMessage()).contains("HTTP 403").contains("ACL not found")
                .contains("was refused").doesNotContain(token);
        assertThat(wrong.sets()).isEmpty();
    }

    static final String COORDINATOR_POLICY = """
            service "workers" { policy = "read" }
            node_prefix "" { policy = "read" }
            """;

    @Test
    void aTokenWhoseReadsConsulFiltersIsAnErrorNamingThePermissionNeverAnEmptySet() {
        String token = "coordinator-" + UUID.randomUUID();
        standIn(ConsulStandIn.builder().aclPolicy(token, COORDINATOR_POLICY).aclToken("admin"), "admin");
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        agent.register(SERVICE, "b", "127.0.0.1", 7002);
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of("token", token, "wait", "1s"), listener);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001", "grpc://127.0.0.1:7002")
                .equals(listener.latestUrls()));

        // An operator narrows the policy: Consul now answers 200 with every entry filtered out. (The
        // query blocked already may still answer under the old rules, as Consul resolves the token
        // once per request.)
        standIn.changeAclPolicy(token, "node_prefix \"\" { policy = \"read\" }");
        agent.register(SERVICE, "c", "127.0.0.1", 7003);

        await().atMost(SEEN).until(listener::stale);
        assertThat(listener.errors().get(0).getMessage())
                .contains("X-Consul-Results-Filtered-By-ACLs")
                .contains("service:read on 'workers'").contains("node:read")
                .doesNotContain(token);
        assertThat(listener.sets()).as("never an empty set").allSatisfy(set -> assertThat(set).isNotEmpty());
        assertThat(listener.latest()).as("the last set is kept").isNotEmpty();

        standIn.changeAclPolicy(token, COORDINATOR_POLICY);
        await().atMost(SEEN).until(() -> !listener.stale());
        assertThat(listener.latestUrls()).hasSize(3);
    }

    @Test
    void entriesFilteredForMissingNodeReadAreAnErrorNamingNodeRead() {
        String token = "one-node-" + UUID.randomUUID();
        standIn(ConsulStandIn.builder().aclToken("admin").aclPolicy(token, """
                service "workers" { policy = "read" }
                node "rollcall-standin" { policy = "read" }
                """), "admin");
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        standIn.injectRawInstance(SERVICE, "{\"Node\":{\"Node\":\"other-node\",\"Address\":\"127.0.0.2\"},"
                + "\"Service\":{\"ID\":\"b\",\"Service\":\"workers\",\"Port\":7002},\"Checks\":[]}");
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of("token", token, "wait", "1s"), listener);

        await().atMost(SEEN).until(() -> !listener.errors().isEmpty());
        assertThat(listener.errors().get(0).getMessage()).contains("left out some instances")
                .contains("lacks node:read");
        assertThat(listener.sets()).as("a partial set is not published").isEmpty();
    }

    /**
     * consul-api reads every answer whole: without a bound, an agent (or whatever answers at its
     * address) decides how much memory the coordinator spends. Past max-response-bytes the answer
     * is a failure naming the limit and its key, and the last good set stays.
     */
    @Test
    void anAnswerLargerThanMaxResponseBytesIsAFailureNamingTheLimitAndTheLastSetStays() {
        standIn(ConsulStandIn.builder(), null);
        agent.register(SERVICE, "a", "127.0.0.1", 7001);
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of("wait", "5s", "max-response-bytes", "4096"), listener);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));

        for (int i = 2; i <= 30; i++) {     // about 300 bytes each: the answer grows past 4 KiB
            agent.register(SERVICE, "w-" + i, "127.0.0." + i, 7001);
        }

        await().atMost(SEEN).until(() -> !listener.errors().isEmpty());
        assertThat(listener.errors().get(0)).hasMessageContaining(P + "max-response-bytes")
                .hasMessageContaining("4096 bytes");
        await().atMost(SEEN).until(() -> standIn.services().size() == 30);
        await().atMost(SEEN).until(() -> listener.errors().size() >= 1 && listener.stale());
        List<CandidateRecorder.Event> events = listener.events();
        int firstError = events.indexOf(events.stream().filter(e -> e.error() != null).findFirst().orElseThrow());
        assertThat(events.subList(firstError, events.size())).as("no set after the answer grew too large: the last"
                + " good one stays").allSatisfy(e -> assertThat(e.error()).isNotNull());
        assertThat(listener.latest()).as("the last good set").isNotEmpty().hasSizeLessThan(30);
    }
}
