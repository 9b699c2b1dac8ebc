package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A misspelt key of the selected backend is reported as unknown, with the key it was meant to be,
 * before the backend complains that the key it misses is not set: the user sees the typo, not a
 * "required" error that sends them looking for a key they believe they wrote.
 */
class MisspeltBackendKeyTest {

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource({
            "etcd,      rollcall.discovery.etcd.endpiont,       rollcall.discovery.etcd.endpoints",
            "consul,    rollcall.discovery.consul.servcie,      rollcall.discovery.consul.service",
            "k8s,       rollcall.discovery.k8s.servcie,         rollcall.discovery.k8s.service",
            "dns,       rollcall.discovery.dns.nmae,            rollcall.discovery.dns.name",
            "zookeeper, rollcall.discovery.zookeeper.conect,    rollcall.discovery.zookeeper.connect",
    })
    void aMisspeltKeyOfTheSelectedBackendIsReportedAsUnknownBeforeItsRequiredKeyIsMissing(
            String type, String misspelt, String meant) {
        RollcallConfig config = RollcallConfig.of(Map.of(
                "rollcall.discovery.type", type,
                misspelt, "127.0.0.1:1",
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0.0"));

        assertThatThrownBy(() -> WorkerResolver.fromConfig(config).close())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(misspelt)
                .hasMessageContaining("did you mean " + meant + "?")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(meant + " is not set"));
    }
}
