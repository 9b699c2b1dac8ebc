package dev.rollcall.discovery.consul;

import static dev.rollcall.discovery.consul.ConsulScenarios.P;
import static dev.rollcall.discovery.consul.ConsulScenarios.SEEN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.testkit.ConsoleCapture;
import dev.rollcall.testkit.ThreadCensus;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.consul.ConsulStandIn;
import dev.rollcall.testkit.consul.RegisteredService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The worker side: a TTL-checked instance that lives while the worker does. */
class ConsulRegistrationTest {

    private static final String SERVICE = "workers";
    private static final WorkerInfo SELF = new WorkerInfo(WorkerEndpoint.of("127.0.0.1", 7001), "1.4.0", "inst-1",
            Map.of(), List.of());
    private static final String ID = "workers-127.0.0.1-7001";

    private ConsulStandIn standIn;
    private final List<WorkerRegistration> registrations = new ArrayList<>();

    @BeforeEach
    void startStandIn() {
        standIn = ConsulStandIn.start();
    }

    @AfterEach
    void stop() {
        registrations.forEach(WorkerRegistration::close);
        standIn.close();
    }

    private WorkerRegistration create(Map<String, String> keys) {
        Map<String, String> full = new HashMap<>();
        full.put(P + "address", standIn.address());
        full.put(P + "service", SERVICE);
        keys.forEach((k, v) -> full.put(P + k, v));
        WorkerRegistration r = new ConsulRegistrationProvider().create(SELF, Settings.of(full).scope(P));
        registrations.add(r);
        return r;
    }

    @Test
    void registersAPassingInstanceAndKeepsItPassingPastItsTtl() {
        WorkerRegistration registration = create(Map.of("registration.check-ttl", "1s", "tag", "prod",
                "registration.tags", "zone-a, prod"));
        registration.start();

        // Registered before start returned, already passing.
        RegisteredService service = standIn.services().get(ID);
        assertThat(service).isNotNull();
        assertThat(service.name()).isEqualTo(SERVICE);
        assertThat(service.address()).isEqualTo("127.0.0.1");
        assertThat(service.port()).isEqualTo(7001);
        assertThat(service.tags()).as("the coordinators' tag filter, then its own").containsExactly("prod", "zone-a");
        assertThat(service.meta()).containsEntry("rollcall-scheme", "grpc").containsEntry("version", "1.4.0")
                .containsEntry("rollcall-instance", "inst-1");
        assertThat(standIn.checkStatus("service:" + ID)).contains("passing");
        assertThat(registration.description()).isEqualTo("consul service 'workers' ID '" + ID + "' at "
                + standIn.address() + " (TTL check 1s, deregistered after 1m critical)");

        // Three TTLs later it is still passing: the heartbeat thread keeps it so.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5))
                .until(() -> standIn.checkStatus("service:" + ID).equals(Optional.of("passing")));
        assertThat(heartbeatThreads()).isEqualTo(1);
    }

    @Test
    void theVersionItWritesIsWhatDiscoveryReadsAsTheCandidatesClaim() {
        create(Map.of("version-meta", "app-version")).start();
        Map<String, String> keys = Map.of(P + "address", standIn.address(), P + "service", SERVICE,
                P + "version-meta", "app-version");
        CandidateRecorder listener = new CandidateRecorder();
        try (WorkerDiscovery discovery = new ConsulWorkerDiscoveryProvider().create(Settings.of(keys).scope(P))) {
            discovery.start(listener);
            await().atMost(SEEN).until(() -> listener.latest() != null && !listener.latest().isEmpty());
        }

        assertThat(standIn.services().get(ID).meta()).containsEntry("app-version", "1.4.0").doesNotContainKey("version");
        assertThat(listener.latest()).singleElement()
                .satisfies(e -> assertThat(e.labels()).containsEntry(WorkerEndpoint.VERSION_LABEL, "1.4.0"));
    }

    @Test
    void versionMetaNoneWritesNoVersion() {
        create(Map.of("version-meta", "none")).start();

        assertThat(standIn.services().get(ID).meta()).doesNotContainKeys("version", "none");
    }

    @Test
    void aVersionMetaKeyConsulWouldRefuseFailsNamingTheKey() {
        for (String bad : List.of("consul-version", "app.version", "x".repeat(129))) {
            assertThatThrownBy(() -> create(Map.of("version-meta", bad))).as(bad)
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining(P + "version-meta").hasMessageContaining("a Consul meta key");
        }
    }

    @Test
    void closeDeregistersAtOnceAndStopsTheHeartbeat() {
        WorkerRegistration registration = create(Map.of("registration.check-ttl", "1s"));
        registration.start();
        await().atMost(SEEN).until(() -> standIn.requestCount(r -> r.path().startsWith("/v1/agent/check/pass/")) >= 1);

        registration.close();

        assertThat(standIn.services()).doesNotContainKey(ID);
        assertThat(heartbeatThreads()).isZero();
        registration.close();   // idempotent
    }

    @Test
    void anAbandonedInstanceTurnsCriticalAndConsulRemovesItAfterDeregisterAfter() {
        ConsulRegistration registration = (ConsulRegistration) create(Map.of("registration.check-ttl", "1s",
                "registration.deregister-after", "2s"));
        registration.start();

        registration.abandon();     // what a crashed worker does: nothing

        await().atMost(SEEN).until(() -> standIn.checkStatus("service:" + ID).equals(Optional.of("critical")));
        await().atMost(SEEN).until(() -> !standIn.services().containsKey(ID));
    }

    /**
     * An operator deregisters the live worker's instance (or an agent lost its state): the next
     * heartbeat, within a third of the TTL, finds its check gone and registers it again, logged
     * with the service ID and the worker. After close() it is gone for good: no heartbeat brings it back.
     */
    @Test
    void registersAgainWhenAnOperatorDeregistersTheLiveInstanceAndNoLongerOnceClosed() {
        WorkerRegistration registration = create(Map.of("registration.check-ttl", "1s"));
        String log;
        try (ConsoleCapture console = new ConsoleCapture()) {
            registration.start();
            long registrations = standIn.requestCount(r -> r.path().equals("/v1/agent/service/register"));

            new TestAgent(standIn.address(), null).deregister(ID);

            await().atMost(SEEN).until(() -> standIn.requestCount(r -> r.path().equals("/v1/agent/service/register"))
                    > registrations && standIn.services().containsKey(ID));
            await().atMost(SEEN).until(() -> standIn.checkStatus("service:" + ID).equals(Optional.of("passing")));
            log = console.text();
        }
        if (ConsoleCapture.seesLogs()) {
            assertThat(log.lines().filter(l -> l.contains(" WARN ") && l.contains(ID) && l.contains("grpc://127.0.0.1:7001")
                    && l.contains("no longer has its instance"))).hasSize(1);
            assertThat(log.lines().filter(l -> l.contains(" INFO ") && l.contains(ID) && l.contains("grpc://127.0.0.1:7001")
                    && l.contains("registered") && l.contains("again"))).hasSize(1);
        }

        registration.close();

        assertThat(standIn.services()).as("deregistered by close()").doesNotContainKey(ID);
        long passes = standIn.requestCount(r -> r.path().startsWith("/v1/agent/check/pass/"));
        // Three heartbeat periods (a third of the 1 s TTL each): none comes, nothing registers it again.
        await().during(Duration.ofMillis(1000)).atMost(Duration.ofSeconds(2)).until(() ->
                !standIn.services().containsKey(ID)
                        && standIn.requestCount(r -> r.path().startsWith("/v1/agent/check/pass/")) == passes);
    }

    @Test
    void keepsBeatingThroughAnAgentOutageAndRecovers() {
        WorkerRegistration registration = create(Map.of("registration.check-ttl", "1s", "request-timeout", "500ms"));
        registration.start();
        standIn.stop();
        long before = standIn.requestCount(r -> r.path().startsWith("/v1/agent/check/pass/"));

        standIn.restart();

        await().atMost(SEEN).until(() -> standIn.requestCount(r -> r.path().startsWith("/v1/agent/check/pass/")) > before);
        assertThat(standIn.checkStatus("service:" + ID)).contains("passing");
        assertThat(heartbeatThreads()).isEqualTo(1);
    }

    @Test
    void createChecksEveryKeyAndSendsNothing() {
        create(Map.of("registration.check-ttl", "5s", "registration.service-id", "w-1"));
        assertThat(standIn.requests()).isEmpty();
        assertThat(heartbeatThreads()).isZero();

        assertThatThrownBy(() -> create(Map.of("registration.check-ttl", "500ms")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(P + "registration.check-ttl").hasMessageContaining("at least 1s");
        assertThatThrownBy(() -> create(Map.of("registration.service-id", "a/b")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(P + "registration.service-id").hasMessageContaining("'a/b'");
        assertThatThrownBy(() -> create(Map.of("registration.deregister-after", "soon")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(P + "registration.deregister-after");
    }

    @Test
    void startFailsNamingTheAgentWhenItIsUnreachableAndLeavesNothingRunning() {
        WorkerEndpoint free = WorkerFleet.freeEndpoint();
        String nowhere = "http://" + free.host() + ":" + free.port();
        WorkerRegistration registration = create(Map.of("address", nowhere, "request-timeout", "1s"));

        assertThatThrownBy(registration::start)
                .isInstanceOf(RegistrationException.class)
                .hasMessageContaining(nowhere).hasMessageContaining(ID).hasMessageContaining("'" + SERVICE + "'");
        assertThat(heartbeatThreads()).isZero();
        registration.close();   // harmless after a failed start
    }

    @Test
    void aRefusedTokenFailsStartWithoutShowingIt() {
        standIn.close();
        standIn = ConsulStandIn.builder().aclToken("the-right-one").start();
        WorkerRegistration registration = create(Map.of("token", "a-wrong-token"));

        assertThatThrownBy(registration::start)
                .isInstanceOf(RegistrationException.class)
                .hasMessageContaining("HTTP 403").hasMessageContaining("ACL not found")
                .hasMessageNotContaining("a-wrong-token");
    }

    @Test
    void registersItsTtlCheckWithAnExplicitCheckId() {
        create(Map.of()).start();

        String body = standIn.requests().stream().filter(r -> r.path().equals("/v1/agent/service/register"))
                .findFirst().orElseThrow().body();
        assertThat(body).contains("\"CheckID\":\"service:" + ID + "\"").contains("\"TTL\":");
        assertThat(standIn.checkStatus("service:" + ID)).contains("passing");
    }

    @Test
    void closingAfterTheAgentAlreadyRemovedTheInstanceIsQuiet() {
        WorkerRegistration registration = create(Map.of("registration.check-ttl", "1s"));
        registration.start();
        new TestAgent(standIn.address(), null).deregister(ID);     // reaped, or removed by an operator
        String log;
        try (LogCapture capture = new LogCapture()) {
            registration.close();
            log = capture.text();
        }
        assertThat(log).doesNotContain("WARN").doesNotContain("failed");
        assertThat(standIn.services()).isEmpty();
    }

    @Test
    void startTwiceIsRefused() {
        WorkerRegistration registration = create(Map.of());
        registration.start();
        assertThatThrownBy(registration::start).isInstanceOf(IllegalStateException.class);
    }

    private static long heartbeatThreads() {
        return ThreadCensus.take().names(ConsulRegistration.THREAD_NAME).size();
    }
}
