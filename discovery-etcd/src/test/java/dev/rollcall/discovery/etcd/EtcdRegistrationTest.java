package dev.rollcall.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.testkit.ConsoleCapture;
import dev.rollcall.testkit.ThreadCensus;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.WorkerProcess;
import dev.rollcall.local.etcd.EtcdServer;
import io.etcd.jetcd.KeyValue;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Workers registering themselves in a real etcd, and a real resolver watching them: they appear,
 * leave at once on a clean shutdown, and vanish after their lease's TTL when they die.
 */
class EtcdRegistrationTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static EtcdServer server;
    private static Etcd etcd;

    private String prefix;

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

    /** One configuration for both sides, as a deployment would share one file. */
    private RollcallConfig config(String ttl) {
        Map<String, String> keys = new HashMap<>(Map.of(
                "rollcall.worker.register", "true",
                "rollcall.discovery.type", "etcd",
                "rollcall.discovery.etcd.endpoints", server.endpoint(),
                "rollcall.discovery.etcd.prefix", prefix,
                "rollcall.discovery.etcd.registration.ttl", ttl,
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0.0"));
        return RollcallConfig.of(keys);
    }

    private static List<String> urls(FleetSnapshot snapshot) {
        return snapshot.workers().stream().map(w -> w.endpoint().url()).toList();
    }

    @Test
    void aRegisteredWorkerAppearsInTheResolversSet() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.0.0").label("zone", "eu-1")
                .config(config("3s")).start();
             WorkerResolver resolver = WorkerResolver.fromConfig(config("3s"))) {

            FleetSnapshot snapshot = resolver.awaitWorkers(1, WAIT);

            assertThat(urls(snapshot)).containsExactly(worker.endpoint().url());
            assertThat(snapshot.workers().get(0).version()).isEqualTo("1.0.0");
            WorkerStatus status = snapshot.status(worker.endpoint().url()).orElseThrow();
            assertThat(status.endpoint().labels()).as("labels travel through etcd").containsEntry("zone", "eu-1");
            assertThat(status.endpoint().labels()).as("the version travels as the candidate's claim")
                    .containsEntry(WorkerEndpoint.VERSION_LABEL, "1.0.0");
            String key = prefix + "127.0.0.1_" + worker.port();
            assertThat(worker.registration().orElseThrow().description())
                    .isEqualTo("etcd key " + key + " (lease 3 s) at " + server.endpoint());
            String json = etcd.get(key).map(kv -> kv.getValue().toString(StandardCharsets.UTF_8)).orElseThrow();
            assertThat(json).contains("\"endpoint\":\"" + worker.endpoint().url() + "\"", "\"version\":\"1.0.0\"",
                    "\"instance_id\":\"" + worker.instanceId() + "\"");
        }
    }

    @Test
    void aCleanShutdownRemovesTheWorkerAtOnce() throws Exception {
        // A long TTL: if the worker left the set within the wait below, its shutdown removed it, not expiry.
        RollcallConfig config = config("60s");
        RollcallWorker worker = RollcallWorker.builder().version("1.0.0").config(config).start();
        try (WorkerResolver resolver = WorkerResolver.fromConfig(config)) {
            resolver.awaitWorkers(1, WAIT);
            String key = prefix + "127.0.0.1_" + worker.port();
            assertThat(etcd.get(key)).isPresent();

            worker.close();

            assertThat(etcd.get(key)).as("deleted before close() returned").isEmpty();
            await().atMost(Duration.ofSeconds(15)).until(() -> resolver.pin().statuses().isEmpty());
        } finally {
            worker.close();
        }
    }

    /**
     * A real worker process killed with SIGKILL: no shutdown hook, no revoke, its keep-alives simply
     * stop, as when a machine dies. Its key stays until etcd expires the lease.
     */
    @Test
    void aKilledWorkerDisappearsWhenItsLeaseExpires() throws Exception {
        RollcallConfig config = config("4s");
        try (WorkerProcess child = WorkerProcess.start(config.values(), WAIT);
             WorkerResolver resolver = WorkerResolver.fromConfig(config)) {
            String key = prefix + "127.0.0.1_" + child.port();
            assertThat(urls(resolver.awaitWorkers(1, WAIT))).containsExactly(child.url());
            long lease = etcd.get(key).map(KeyValue::getLease).orElseThrow();

            child.kill();
            assertThat(etcd.get(key).map(KeyValue::getLease)).as("nothing deleted it: only its lease can")
                    .contains(lease);

            await().atMost(WAIT).until(() -> etcd.get(key).isEmpty());
            await().atMost(WAIT).until(() -> resolver.pin().statuses().isEmpty());
        }
    }

    @Test
    void writesTheEntryAgainWhenItsLeaseIsRevoked() {
        WorkerInfo self = new WorkerInfo(WorkerEndpoint.of("127.0.0.1", 7101), "1.0.0", "i-1", Map.of(), List.of());
        EtcdRegistration registration = (EtcdRegistration) new EtcdRegistrationProvider().create(self,
                Etcd.settings(Map.of("endpoints", server.endpoint(), "prefix", prefix, "registration.ttl", "3s",
                        "backoff.initial", "100ms", "backoff.max", "1s")));
        try {
            registration.start();
            String key = prefix + "127.0.0.1_7101";
            assertThat(registration.key()).isEqualTo(key);
            long first = etcd.get(key).map(KeyValue::getLease).orElseThrow();

            etcd.revokeLease(first);        // an operator's mistake, or a lease lost while etcd was away

            await().atMost(WAIT).until(() -> etcd.get(key).map(KeyValue::getLease).filter(l -> l != first).isPresent());
            // The new key is visible to us as soon as etcd applies the put, maybe before the
            // registration's thread has counted the lease: wait for the count, do not race it.
            await().atMost(WAIT).untilAsserted(() -> assertThat(registration.leasesGranted()).isEqualTo(2));
            assertThat(WorkerValue.parse(etcd.get(key).orElseThrow().getValue().getBytes()))
                    .isEqualTo(WorkerEndpoint.of("127.0.0.1", 7101).withLabels(Map.of(WorkerEndpoint.INSTANCE_ID_LABEL, "i-1",
                            WorkerEndpoint.VERSION_LABEL, "1.0.0")));
        } finally {
            registration.close();
        }
        assertThat(etcd.getPrefix(prefix)).isEmpty();
    }

    /**
     * An operator runs {@code etcdctl del} on a live worker's key: its lease is alive, so nothing
     * else would ever bring the key back. The registration watches it and writes it again at once
     * under the same lease, logged with the key and the worker; close() removes it for good.
     */
    @Test
    void writesItsKeyAgainWhenAnOperatorDeletesItWhileTheLeaseLivesAndNoLongerOnceClosed() {
        WorkerInfo self = WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 7104), "1.0.0");
        EtcdRegistration registration = (EtcdRegistration) new EtcdRegistrationProvider().create(self,
                Etcd.settings(Map.of("endpoints", server.endpoint(), "prefix", prefix, "registration.ttl", "30s")));
        String key = prefix + "127.0.0.1_7104";
        String log;
        try (ConsoleCapture console = new ConsoleCapture()) {
            registration.start();
            long lease = etcd.get(key).map(KeyValue::getLease).orElseThrow();

            etcd.delete(key);

            await().atMost(WAIT).until(() -> etcd.get(key).isPresent());
            assertThat(etcd.get(key).map(KeyValue::getLease)).as("the same lease, still alive").contains(lease);
            await().atMost(WAIT).untilAsserted(() -> assertThat(registration.rewrites()).isEqualTo(1));
            log = console.text();
        } finally {
            registration.close();
        }
        assertThat(registration.leasesGranted()).as("no new lease: the old one lived").isEqualTo(1);
        if (ConsoleCapture.seesLogs()) {
            assertThat(log.lines().filter(l -> l.contains(" WARN ") && l.contains(key)
                    && l.contains("grpc://127.0.0.1:7104") && l.contains("was deleted"))).hasSize(1);
            assertThat(log.lines().filter(l -> l.contains(" INFO ") && l.contains(key)
                    && l.contains("grpc://127.0.0.1:7104") && l.contains("written again"))).hasSize(1);
        }
        assertThat(etcd.get(key)).as("removed by close()").isEmpty();
        assertThat(ThreadCensus.take().names(EtcdRegistration.THREAD_NAME)).as("threads right after close()").isEmpty();
        etcd.put(key, "grpc://127.0.0.1:7104");
        etcd.delete(key);
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> etcd.get(key).isEmpty());
    }

    @Test
    void keepsTheEntryAcrossAnEtcdRestart() {
        try (EtcdServer own = EtcdServer.start()) {
            WorkerInfo self = WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 7102), "1.0.0");
            EtcdRegistration registration = (EtcdRegistration) new EtcdRegistrationProvider().create(self,
                    Etcd.settings(Map.of("endpoints", own.endpoint(), "prefix", prefix, "registration.ttl", "5s")));
            try {
                registration.start();
                String key = prefix + "127.0.0.1_7102";
                own.stop();
                long acknowledged = registration.keepAlivesAcknowledged();
                own.restart();

                // etcd renews every lease when it comes back; the keep-alives must reach it again.
                await().atMost(WAIT).until(() -> registration.keepAlivesAcknowledged() > acknowledged);
                try (Etcd etcd2 = new Etcd(own)) {
                    assertThat(etcd2.get(key)).isPresent();
                }
                assertThat(registration.leasesGranted()).as("the first lease carried on").isEqualTo(1);
            } finally {
                registration.close();
            }
        }
    }

    @Test
    void failsWithARegistrationExceptionWithoutSecretsWhenEtcdIsUnreachable() {
        String nowhere = "http://127.0.0.1:" + WorkerFleet.freeEndpoint().port();
        String password = "hunter2-do-not-print";
        WorkerInfo self = WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 7103), "1.0.0");
        WorkerRegistration registration = new EtcdRegistrationProvider().create(self, Etcd.settings(Map.of(
                "endpoints", nowhere, "prefix", prefix, "user", "rollcall", "password", password,
                "connect-timeout", "500ms", "request-timeout", "1s")));

        assertThatThrownBy(registration::start)
                .isInstanceOf(RegistrationException.class)
                .hasMessageContaining("grpc://127.0.0.1:7103")
                .hasMessageContaining(prefix + "127.0.0.1_7103")
                .hasMessageContaining(nowhere)
                .satisfies(e -> assertThat(stackTrace(e)).doesNotContain(password));
        assertThat(registration.description()).doesNotContain(password);
        registration.close();
        ThreadCensus.awaitNoneAlive(WAIT, EtcdRegistration.THREAD_NAME);
    }

    @Test
    void aTypoInARegistrationKeyFailsTheWorkerBeforeAnythingIsRegistered() {
        RollcallConfig config = config("3s").with("rollcall.discovery.etcd.registration.tll", "5s");

        assertThatThrownBy(() -> RollcallWorker.builder().version("1.0.0").config(config).start())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.etcd.registration.tll")
                .hasMessageContaining("rollcall.discovery.etcd.registration.ttl");
        assertThat(etcd.getPrefix(prefix)).isEmpty();
    }

    private static String stackTrace(Throwable e) {
        StringWriter out = new StringWriter();
        e.printStackTrace(new PrintWriter(out));
        return out.toString();
    }
}
