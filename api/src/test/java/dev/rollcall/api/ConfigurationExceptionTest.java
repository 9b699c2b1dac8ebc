package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ConfigurationExceptionTest {

    @Test
    void invalidNamesKeyValueAndExpectation() {
        ConfigurationException e = ConfigurationException.invalid("rollcall.probe.timeout", "soon", "a duration");

        assertThat(e.key()).isEqualTo("rollcall.probe.timeout");
        assertThat(e).hasMessage("rollcall.probe.timeout='soon': expected a duration");
    }

    @Test
    void missingNamesKeyAndExpectation() {
        ConfigurationException e = ConfigurationException.missing("rollcall.policy.type", "a policy type");

        assertThat(e.key()).isEqualTo("rollcall.policy.type");
        assertThat(e).hasMessage("rollcall.policy.type is not set: expected a policy type");
    }

    @Test
    void constructorsKeepKeyMessageAndCause() {
        RuntimeException cause = new RuntimeException("boom");
        ConfigurationException e = new ConfigurationException("k", "msg", cause);

        assertThat(e.key()).isEqualTo("k");
        assertThat(e).hasMessage("msg").hasCause(cause);
        assertThat(new ConfigurationException("k2", "m2").key()).isEqualTo("k2");
    }

    @ParameterizedTest
    @ValueSource(strings = {"rollcall.discovery.etcd.password", "rollcall.discovery.consul.token",
            "rollcall.discovery.consul.acl-token", "rollcall.discovery.etcd.tls.key", "a.client-secret",
            "a.private-key", "A.Password"})
    void printableMasksSecretKeys(String key) {
        assertThat(ConfigurationException.printable(key, "hunter2")).isEqualTo("****");
        assertThat(ConfigurationException.invalid(key, "hunter2", "x").getMessage())
                .doesNotContain("hunter2")
                .contains(key + "=****");
    }

    @ParameterizedTest
    @ValueSource(strings = {"rollcall.probe.timeout", "rollcall.discovery.static.endpoints", "a.keyspace",
            "a.key-count"})
    void printableQuotesOrdinaryValues(String key) {
        assertThat(ConfigurationException.printable(key, "v 1")).isEqualTo("'v 1'");
    }

    /** A URL with a password written where none belongs: the message names the key, never the password. */
    @Test
    void printableMasksTheUserInfoOfAUrlAndEscapesTheValue() {
        assertThat(ConfigurationException.invalid("rollcall.discovery.etcd.endpoints",
                "http://root:pa/ss@127.0.0.1:2379", "etcd URLs").getMessage())
                .isEqualTo("rollcall.discovery.etcd.endpoints='http://***@127.0.0.1:2379': expected etcd URLs");
        assertThat(ConfigurationException.printable("rollcall.probe.timeout", "2s\n[main] INFO FORGED"))
                .isEqualTo("'2s\\n[main] INFO FORGED'");
        assertThat(ConfigurationException.printable("rollcall.discovery.static.endpoints", "x".repeat(5000)))
                .hasSizeLessThan(1100).endsWith("...(3976 more)'");
    }
}
