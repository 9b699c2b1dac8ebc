package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.api.registration.WorkerRegistrationProvider;
import java.util.HashMap;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every key a backend reads, its discovery's and its registration's, is declared in a catalog: a
 * key read but declared nowhere would escape the unknown-key check, the docs tables and their test.
 * Each backend is created (nothing is contacted) from its required keys, everything it reads is
 * recorded by the configuration, and compared with the catalogs.
 */
class BackendReadsOnlyDeclaredKeysTest {

    private static final Map<String, Map<String, String>> REQUIRED = Map.of(
            "etcd", Map.of("endpoints", "http://127.0.0.1:1"),
            "consul", Map.of("service", "workers", "address", "http://127.0.0.1:1"),
            "k8s", Map.of("service", "workers", "namespace", "compute", "master", "http://127.0.0.1:1"),
            "dns", Map.of("name", "workers.example.test", "port", "7001", "server", "127.0.0.1:1"),
            "zookeeper", Map.of("connect", "127.0.0.1:1"));

    @ParameterizedTest
    @ValueSource(strings = {"etcd", "consul", "k8s", "dns", "zookeeper"})
    void everyKeyTheBackendReadsIsDeclaredInACatalog(String type) {
        String scope = "rollcall.discovery." + type + ".";
        Map<String, String> values = new HashMap<>();
        REQUIRED.get(type).forEach((k, v) -> values.put(scope + k, v));
        RollcallConfig config = RollcallConfig.of(values);

        WorkerDiscoveryProvider discovery = ServiceLoader.load(WorkerDiscoveryProvider.class).stream()
                .map(ServiceLoader.Provider::get).filter(p -> p.type().equals(type)).findFirst().orElseThrow();
        try (WorkerDiscovery created = discovery.create(config.settings().scope(scope))) {
            assertThat(created).isNotNull();
        }
        ServiceLoader.load(WorkerRegistrationProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.type().equals(type)).findFirst().ifPresent(registration -> {
                    try (WorkerRegistration created = registration.create(
                            WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", 7001), "1.0.0"),
                            config.settings().scope(scope))) {
                        assertThat(created).isNotNull();
                    }
                });

        Set<String> declared = KeyCatalog.all(getClass().getClassLoader()).stream().map(SettingKey::name)
                .collect(Collectors.toSet());
        Set<String> read = config.readKeys().stream().filter(k -> k.startsWith(scope)).collect(Collectors.toSet());
        assertThat(read).as("keys the %s backend read", type).hasSizeGreaterThan(REQUIRED.get(type).size());
        assertThat(read).as("keys the %s backend read but no catalog declares", type).isSubsetOf(declared);
    }
}
