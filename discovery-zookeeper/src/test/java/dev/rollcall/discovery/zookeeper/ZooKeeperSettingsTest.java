package dev.rollcall.discovery.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.WorkerRegistrationProvider;
import java.time.Duration;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** Reading and checking {@code rollcall.discovery.zookeeper.*}, without any server. */
class ZooKeeperSettingsTest {

    private static ZooKeeperSettings read(Map<String, String> relative) {
        return ZooKeeperSettings.read(ZooKeeper.settings(relative));
    }

    @Test
    void theRegistrationProviderIsFoundByServiceLoaderAsTypeZooKeeper() {
        // The discovery provider's: ZooKeeperWorkerDiscoveryContractTest.
        assertThat(ServiceLoader.load(WorkerRegistrationProvider.class).stream().map(ServiceLoader.Provider::get)
                .map(WorkerRegistrationProvider::type)).contains("zookeeper");
    }

    @Test
    void appliesTheDocumentedDefaults() {
        ZooKeeperSettings s = read(Map.of("connect", "127.0.0.1:2181"));

        assertThat(s.path()).isEqualTo("/rollcall/workers");
        assertThat(s.sessionTimeout()).isEqualTo(Duration.ofSeconds(15));
        assertThat(s.connectionTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.backoffInitial()).isEqualTo(Duration.ofMillis(500));
        assertThat(s.backoffMax()).isEqualTo(Duration.ofSeconds(10));
        assertThat(s.user()).isNull();
        assertThat(read(Map.of("connect", "a:1,b:2/chroot", "path", "/services/workers/")).path())
                .as("a trailing slash is dropped").isEqualTo("/services/workers");
    }

    @Test
    void requiresAConnectionStringAndRejectsAMalformedOne() {
        assertThatThrownBy(() -> read(Map.of())).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.zookeeper.connect");
        assertThatThrownBy(() -> read(Map.of("connect", "10.0.0.1:2181,10.0.0.2:x")))
                .hasMessageContaining("rollcall.discovery.zookeeper.connect").hasMessageContaining("10.0.0.2:x");
        assertThatThrownBy(() -> read(Map.of("connect", "10.0.0.1:2181/bad//chroot")))
                .hasMessageContaining("rollcall.discovery.zookeeper.connect").hasMessageContaining("chroot");
    }

    @Test
    void rejectsAPathThatIsNotAnAbsoluteNodeBelowTheRoot() {
        assertThatThrownBy(() -> read(Map.of("connect", "a:1", "path", "workers")))
                .hasMessageContaining("rollcall.discovery.zookeeper.path").hasMessageContaining("workers");
        assertThatThrownBy(() -> read(Map.of("connect", "a:1", "path", "/")))
                .hasMessageContaining("rollcall.discovery.zookeeper.path");
    }

    @Test
    void rejectsBackoffThatMakesNoSense() {
        assertThatThrownBy(() -> read(Map.of("connect", "a:1", "backoff.initial", "5s", "backoff.max", "1s")))
                .hasMessageContaining("rollcall.discovery.zookeeper.backoff.max");
        assertThatThrownBy(() -> read(Map.of("connect", "a:1", "session-timeout", "0s")))
                .hasMessageContaining("rollcall.discovery.zookeeper.session-timeout");
    }

    @Test
    void requiresUserAndPasswordTogetherAndNeverShowsThePassword() {
        String password = "hunter2-do-not-print";
        assertThatThrownBy(() -> read(Map.of("connect", "a:1", "password", password)))
                .hasMessageContaining("rollcall.discovery.zookeeper.user").hasMessageNotContaining(password);
        ZooKeeperSettings s = read(Map.of("connect", "a:1", "user", "rollcall", "password", password));
        assertThat(s.toString()).contains("user=rollcall").doesNotContain(password);
        assertThat(new ZooKeeperWorkerDiscovery(s).description()).doesNotContain(password);
    }

    @Test
    void registrationIdDefaultsToHostAndPortAndIsChecked() {
        WorkerInfo self = WorkerInfo.of(WorkerEndpoint.of("10.0.0.5", 7001), "1.0.0");
        ZooKeeperRegistration r = (ZooKeeperRegistration) new ZooKeeperRegistrationProvider().create(self,
                ZooKeeper.settings(Map.of("connect", "a:1")));
        assertThat(r.path()).isEqualTo("/rollcall/workers/10.0.0.5_7001");
        assertThat(r.description()).isEqualTo("ZooKeeper node /rollcall/workers/10.0.0.5_7001 at a:1");

        assertThatThrownBy(() -> new ZooKeeperRegistrationProvider().create(self,
                ZooKeeper.settings(Map.of("connect", "a:1", "registration.id", "a/b"))))
                .hasMessageContaining("rollcall.discovery.zookeeper.registration.id").hasMessageContaining("a/b");
    }
}
