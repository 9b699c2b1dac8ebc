package dev.rollcall.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.RollcallConfig;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkerRegistrationTest {

    private static RollcallConfig config(String... keyValues) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return RollcallConfig.of(m);
    }

    @Test
    void registersWithTheConfiguredBackendWhatCoordinatorsWillSee() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").label("zone", "a")
                .config(config("rollcall.worker.register", "true", "rollcall.discovery.type", "memory"))
                .start()) {
            assertThat(MemoryRegistrationProvider.REGISTERED.get(worker.endpoint().url()))
                    .isEqualTo(worker.info())
                    .satisfies(info -> {
                        assertThat(info.version()).isEqualTo("1.4.0");
                        assertThat(info.instanceId()).isEqualTo(worker.instanceId());
                        assertThat(info.labels()).containsEntry("zone", "a");
                    });
            assertThat(worker.registration()).hasValueSatisfying(
                    r -> assertThat(r.description()).isEqualTo("memory entry " + worker.endpoint().url()));
        }
    }

    @Test
    void leavesDiscoveryBeforeItStopsServing() throws Exception {
        RollcallWorker worker = RollcallWorker.builder().version("1.4.0")
                .config(config("rollcall.worker.register", "true", "rollcall.discovery.type", "memory"))
                .start();
        String url = worker.endpoint().url();
        worker.close();
        assertThat(MemoryRegistrationProvider.REGISTERED).doesNotContainKey(url);
        assertThat(MemoryRegistrationProvider.ANSWERED_WHEN_LEAVING).containsEntry(url, true);
    }

    @Test
    void doesNotRegisterUnlessAskedTo() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder()
                .config(config("rollcall.discovery.type", "memory")).start()) {
            assertThat(worker.registration()).isEmpty();
            assertThat(MemoryRegistrationProvider.REGISTERED).doesNotContainKey(worker.endpoint().url());
        }
    }

    @Test
    void failedRegistrationStopsTheServerAndFreesThePort() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        RollcallWorker.Builder builder = RollcallWorker.builder().port(port)
                .config(config("rollcall.worker.register", "true", "rollcall.discovery.type", "refusing"));
        assertThatThrownBy(builder::start).isInstanceOf(RegistrationException.class)
                .hasMessageContaining("did not acknowledge");
        // Netty closes the listening socket asynchronously: the port is free soon, not necessarily at once.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            try (ServerSocket again = new ServerSocket()) {
                again.bind(new InetSocketAddress("127.0.0.1", port));
                assertThat(again.isBound()).isTrue();
            }
        });
    }

    @Test
    void typoInAWorkerKeyFailsNamingTheNearestKey() {
        RollcallWorker.Builder builder = RollcallWorker.builder()
                .config(config("rollcall.worker.regster", "true"));
        assertThatThrownBy(builder::start).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.worker.regster")
                .hasMessageContaining("did you mean rollcall.worker.register?");
    }

    @Test
    void typoInARegistrationKeyFailsNamingTheNearestKey() {
        RollcallWorker.Builder builder = RollcallWorker.builder().config(config(
                "rollcall.worker.register", "true", "rollcall.discovery.type", "memory",
                "rollcall.discovery.memory.registration.tll", "5s"));
        assertThatThrownBy(builder::start).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.memory.registration.tll")
                .hasMessageContaining("did you mean rollcall.discovery.memory.registration.ttl?");
    }

    @Test
    void leavesTheCoordinatorsKeysInASharedFileAlone() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.0.0").config(config(
                "rollcall.worker.register", "true", "rollcall.discovery.type", "memory",
                "rollcall.discovery.memory.watch-interval", "1s",
                "rollcall.policy.type", "semver", "rollcall.probe.timeout", "1s")).start()) {
            assertThat(worker.registration()).isPresent();
        }
    }

    @Test
    void badRegistrationValueNamesItsKey() {
        RollcallWorker.Builder builder = RollcallWorker.builder().config(config(
                "rollcall.worker.register", "true", "rollcall.discovery.type", "memory",
                "rollcall.discovery.memory.registration.ttl", "ten seconds"));
        assertThatThrownBy(builder::start).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.memory.registration.ttl")
                .hasMessageContaining("ten seconds");
    }

    @Test
    void unknownBackendListsTheOnesFound() {
        RollcallWorker.Builder builder = RollcallWorker.builder().config(config(
                "rollcall.worker.register", "true", "rollcall.discovery.type", "memroy"));
        assertThatThrownBy(builder::start).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.type='memroy'")
                .hasMessageContaining("did you mean 'memory'?");
    }

    @Test
    void refusesToRegisterAWildcardAddress() {
        RollcallWorker.Builder builder = RollcallWorker.builder().host("0.0.0.0").config(config(
                "rollcall.worker.register", "true", "rollcall.discovery.type", "memory"));
        assertThatThrownBy(builder::start).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.worker.advertise-host")
                .hasMessageContaining("0.0.0.0");
    }

    @Test
    void advertisesTheConfiguredHostWhileBindingAnother() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().config(config(
                "rollcall.worker.host", "0.0.0.0", "rollcall.worker.advertise-host", "127.0.0.1",
                "rollcall.worker.register", "true", "rollcall.discovery.type", "memory")).start()) {
            assertThat(worker.endpoint().host()).isEqualTo("127.0.0.1");
            assertThat(MemoryRegistrationProvider.REGISTERED).containsKey(worker.endpoint().url());
        }
    }
}
