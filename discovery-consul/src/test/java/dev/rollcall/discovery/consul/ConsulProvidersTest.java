package dev.rollcall.discovery.consul;

import static dev.rollcall.discovery.consul.ConsulScenarios.P;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.registration.WorkerRegistrationProvider;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import java.util.HashMap;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** Configuration: every key checked at creation, each error naming its full key. */
class ConsulProvidersTest {

    private static WorkerDiscovery create(Map<String, String> keys) {
        Map<String, String> full = new HashMap<>();
        full.put(P + "service", "workers");
        keys.forEach((k, v) -> full.put(P + k, v));
        return new ConsulWorkerDiscoveryProvider().create(Settings.of(full).scope(P));
    }

    // The discovery side is found by ServiceLoader in ConsulWorkerDiscoveryContractTest.
    @Test
    void registrationIsFoundByServiceLoaderAsTypeConsul() {
        assertThat(ServiceLoader.load(WorkerRegistrationProvider.class).stream().map(ServiceLoader.Provider::get))
                .filteredOn(p -> p.type().equals("consul")).singleElement()
                .isInstanceOf(ConsulRegistrationProvider.class);
    }

    @Test
    void requiresTheServiceName() {
        assertThatThrownBy(() -> new ConsulWorkerDiscoveryProvider().create(Settings.of(Map.of()).scope(P)))
                .isInstanceOfSatisfying(ConfigurationException.class, e -> assertThat(e.key()).isEqualTo(P + "service"))
                .hasMessageContaining(P + "service is not set");
        assertThatThrownBy(() -> create(Map.of("service", "my workers")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'my workers'");
    }

    @Test
    void describesItselfWithDefaultsAndWithoutTheToken() {
        try (WorkerDiscovery d = create(Map.of("token", "very-secret-token"))) {
            assertThat(d.description()).isEqualTo("consul[service=workers at http://127.0.0.1:8500, 0 endpoints]");
            assertThat(d.toString()).doesNotContain("very-secret-token");
        }
        try (WorkerDiscovery d = create(Map.of("address", "consul.local:8600", "tag", "a,b", "node-meta", "zone:eu",
                "datacenter", "dc2", "passing-only", "false"))) {
            assertThat(d.description()).isEqualTo("consul[service=workers at http://consul.local:8600, all health "
                    + "states, tag=a,b, node-meta=zone:eu, dc=dc2, 0 endpoints]");
        }
    }

    @Test
    void acceptsTheAddressFormsConsulToolsUse() {
        assertThat(connection("127.0.0.1:8500").address()).isEqualTo("http://127.0.0.1:8500");
        assertThat(connection("http://consul.local").address()).isEqualTo("http://consul.local:8500");
        assertThat(connection("https://consul.local/").address()).isEqualTo("https://consul.local:8501");
        assertThat(connection("http://[::1]:8500").address()).isEqualTo("http://[::1]:8500");
    }

    private static ConsulSettings connection(String address) {
        return ConsulSettings.read(Settings.of(Map.of(P + "address", address, P + "service", "w")).scope(P));
    }

    /**
     * An ACL token over plain HTTP to another machine is readable by anyone on the path: refused when
     * the settings are read, before any client exists (the addresses below are never contacted), on
     * both the discovery and the registration side.
     */
    @Test
    void refusesATokenOverPlainHttpToAHostThatIsNotLoopbackNamingTheKeyTheAddressAndTheWayOut() {
        for (String address : new String[] {"http://10.0.0.2:8500", "consul.example.com:8500",
                "http://127.evil.example:8500", "http://[2001:db8::1]:8500", "http://127.0.0.1.nip.io"}) {
            Map<String, String> keys = Map.of("address", address, "token", "very-secret-token");
            assertThatThrownBy(() -> create(keys)).as(address)
                    .isInstanceOfSatisfying(ConfigurationException.class, e -> assertThat(e.key()).isEqualTo(P + "token"))
                    .hasMessageContaining(P + "token is set but " + P + "address=")
                    .hasMessageContaining(address.replaceFirst("^http://", "").replaceFirst(":\\d+$", ""))
                    .hasMessageContaining("https://").hasMessageContaining(P + "allow-plaintext-credentials=true")
                    .hasMessageNotContaining("very-secret-token");
            Map<String, String> full = new HashMap<>();
            keys.forEach((k, v) -> full.put(P + k, v));
            full.put(P + "service", "workers");
            assertThatThrownBy(() -> new ConsulRegistrationProvider().create(
                    WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 7001), "1.0.0"), Settings.of(full).scope(P)))
                    .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "allow-plaintext-credentials");
        }
    }

    @Test
    void acceptsATokenOverPlainHttpToLoopbackOverHttpsOrWhenAllowed() {
        for (String address : new String[] {"http://127.0.0.1:8500", "localhost:8500", "http://[::1]:8500",
                "http://127.9.9.9", "https://consul.example.com:8501", "https://10.0.0.2"}) {
            assertThat(ConsulSettings.read(Settings.of(Map.of(P + "address", address, P + "service", "w",
                    P + "token", "very-secret-token")).scope(P)).hasToken()).as(address).isTrue();
        }
        assertThat(ConsulSettings.read(Settings.of(Map.of(P + "address", "http://10.0.0.2:8500", P + "service", "w",
                P + "token", "very-secret-token", P + "allow-plaintext-credentials", "true")).scope(P)).hasToken())
                .isTrue();
        // Without a token there is nothing to leak: plain HTTP to anywhere is as before.
        assertThat(connection("http://10.0.0.2:8500").hasToken()).isFalse();
        assertThatThrownBy(() -> create(Map.of("allow-plaintext-credentials", "yes")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(P + "allow-plaintext-credentials='yes'");
    }

    @Test
    void rejectsAddressesThatAreNotAnAgent() {
        for (String bad : new String[] {"ftp://h:1", "http://h:1/v1", "http://user@h:1", "http://h:1?x=1", "http://"}) {
            assertThatThrownBy(() -> create(Map.of("address", bad))).as(bad)
                    .isInstanceOfSatisfying(ConfigurationException.class, e -> assertThat(e.key()).isEqualTo(P + "address"))
                    .hasMessageContaining("'" + bad.replace("user@", "***@") + "'") // user info is never shown
                    .hasMessageNotContaining("user@");
        }
    }

    @Test
    void acceptsOnlyAWaitConsulCanHonour() {
        for (String bad : new String[] {"500ms", "1500ms", "11m", "5"}) {
            assertThatThrownBy(() -> create(Map.of("wait", bad))).as(bad)
                    .isInstanceOfSatisfying(ConfigurationException.class, e -> assertThat(e.key()).isEqualTo(P + "wait"))
                    .hasMessageContaining("'" + bad + "'");
        }
        create(Map.of("wait", "10m")).close();
        create(Map.of("wait", "1s")).close();
    }

    @Test
    void rejectsMalformedNodeMetaAndBackoff() {
        assertThatThrownBy(() -> create(Map.of("node-meta", "zone:eu,rack")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "node-meta").hasMessageContaining("'rack'");
        assertThatThrownBy(() -> create(Map.of("backoff.initial", "10s", "backoff.max", "1s")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "backoff.initial")
                .hasMessageContaining(P + "backoff.max");
        assertThatThrownBy(() -> create(Map.of("rate-limit.interval", "11m")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(P + "rate-limit.interval"))
                .hasMessageContaining("'11m'");
        assertThatThrownBy(() -> create(Map.of("rate-limit.interval", "-1s")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "rate-limit.interval")
                .hasMessageContaining("'-1s'");
        assertThatThrownBy(() -> create(Map.of("rate-limit.burst", "0")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "rate-limit.burst")
                .hasMessageContaining("'0'");
        create(Map.of("rate-limit.interval", "0s", "rate-limit.burst", "5")).close();
        assertThatThrownBy(() -> create(Map.of("consistency", "eventual")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "consistency")
                .hasMessageContaining("'eventual'").hasMessageContaining("stale, default or consistent");
        assertThatThrownBy(() -> create(Map.of("filter", "Service.Port == 1\nor true")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "filter");
        create(Map.of("consistency", "STALE", "filter", "Service.Meta.zone == eu-1")).close();
        assertThatThrownBy(() -> create(Map.of("passing-only", "yes")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "passing-only");
        assertThatThrownBy(() -> create(Map.of("keepalive-time", "50ms")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "keepalive-time")
                .hasMessageContaining("100ms");
        assertThatThrownBy(() -> create(Map.of("max-response-bytes", "100")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "max-response-bytes");
    }

    @Test
    void masksATokenItRejects() {
        assertThatThrownBy(() -> create(Map.of("token", "has a space")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "token")
                .hasMessageNotContaining("has a space");
    }

    @Test
    void tlsKeysNeedAnHttpsAddressAndComeInPairs() {
        assertThatThrownBy(() -> create(Map.of("tls.ca", "/etc/consul/ca.pem")))
                .isInstanceOfSatisfying(ConfigurationException.class, e -> assertThat(e.key()).isEqualTo(P + "tls.ca"))
                .hasMessageContaining("https://");
        assertThatThrownBy(() -> create(Map.of("address", "https://h:8501", "tls.cert", "/etc/c.pem")))
                .isInstanceOfSatisfying(ConfigurationException.class, e -> assertThat(e.key()).isEqualTo(P + "tls.key"));
        assertThatThrownBy(() -> create(Map.of("address", "https://h:8501", "tls.ca", "/no/such/ca.pem")))
                .isInstanceOfSatisfying(ConfigurationException.class, e -> assertThat(e.key()).isEqualTo(P + "tls.ca"))
                .hasMessageContaining("/no/such/ca.pem");
    }

    @Test
    void theCoordinatorReadsEveryDiscoveryKeyAndLeavesRegistrationKeysToTheWorker() {
        Map<String, String> keys = new HashMap<>();
        keys.put("rollcall.discovery.type", "consul");
        keys.put("rollcall.policy.type", "exact");
        keys.put("rollcall.policy.exact.version", "1.0.0");
        for (String k : new String[] {"address=http://127.0.0.1:1", "service=w", "passing-only=true", "tag=a",
                "node-meta=z:1", "datacenter=dc1", "token=t", "wait=1s", "request-timeout=1s", "backoff.initial=1s",
                "backoff.max=2s", "rate-limit.interval=5s", "rate-limit.burst=3", "filter=Service.Port != 0", "consistency=stale", "keepalive-time=2s",
                "max-response-bytes=1048576", "registration.check-ttl=5s", "registration.tags=x"}) {
            int eq = k.indexOf('=');
            keys.put(P + k.substring(0, eq), k.substring(eq + 1));
        }
        // No "unknown key" complaint: the resolver starts (its discovery just cannot reach the agent).
        WorkerResolver.fromConfig(RollcallConfig.of(keys)).close();

        keys.put(P + "waitt", "1s");
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(keys)))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining(P + "waitt")
                .hasMessageContaining("did you mean " + P + "wait");
    }

    @Test
    void registrationDefaultsItsIdFromTheWorkersAddress() {
        WorkerInfo self = WorkerInfo.of(WorkerEndpoint.of("10.0.0.7", 7001), "1.0.0");
        ConsulRegistration r = (ConsulRegistration) new ConsulRegistrationProvider().create(self,
                Settings.of(Map.of(P + "service", "workers")).scope(P));
        assertThat(r.serviceId()).isEqualTo("workers-10.0.0.7-7001");
        assertThat(r.checkId()).isEqualTo("service:workers-10.0.0.7-7001");
        r.close();
    }
}
