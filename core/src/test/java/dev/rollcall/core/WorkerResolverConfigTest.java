package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkerResolverConfigTest {

    private static Map<String, String> base() {
        Map<String, String> m = new HashMap<>();
        m.put("rollcall.discovery.type", "nothing");
        m.put("rollcall.policy.type", "any");
        return m;
    }

    private static WorkerResolver build(Map<String, String> values) {
        return WorkerResolver.fromConfig(RollcallConfig.of(values));
    }

    @Test
    void buildsFromTypesFoundOnTheClasspath() throws Exception {
        try (WorkerResolver resolver = build(base())) {
            // The first set from discovery is published even when it is empty: "no candidates" is news.
            assertThat(resolver.awaitVersion(1, Duration.ofSeconds(5)).number()).isEqualTo(1);
            assertThat(resolver.workers()).isEmpty();
        }
    }

    @Test
    void grpcTargetWithoutTheGrpcModuleSaysWhichArtifactBringsIt() {
        // core's own test class path has no rollcall-grpc: the rollcall: scheme is not registered.
        try (WorkerResolver resolver = build(base())) {
            assertThatThrownBy(resolver::grpcTarget)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("dev.rollcall:rollcall-grpc")
                    .hasMessageContaining("channel(endpoint)");
        }
    }

    @Test
    void unknownDiscoveryTypeNamesKeyAndListsWhatIsAvailable() {
        Map<String, String> m = base();
        m.put("rollcall.discovery.type", "nothinng");
        assertThatThrownBy(() -> build(m))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.type='nothinng'")
                .hasMessageContaining("did you mean 'nothing'")
                .hasMessageContaining("nothing (dev.rollcall.core.TestProviders$NothingDiscoveryProvider from ")
                .hasMessageContaining("twin");
    }

    @Test
    void unknownPolicyTypeNamesKeyAndListsWhatIsAvailable() {
        Map<String, String> m = base();
        m.put("rollcall.policy.type", "semverr");
        assertThatThrownBy(() -> build(m))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.policy.type='semverr'")
                .hasMessageContaining("any (dev.rollcall.core.TestProviders$AnyPolicyProvider from ");
    }

    @Test
    void duplicateProvidersOfTheSelectedTypeAreAnError() {
        Map<String, String> m = base();
        m.put("rollcall.discovery.type", "twin");
        assertThatThrownBy(() -> build(m))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("2 modules provide discovery type 'twin'")
                .hasMessageContaining("TestProviders$TwinOne")
                .hasMessageContaining("TestProviders$TwinTwo");
    }

    @Test
    void missingTypesNameTheirKeys() {
        Map<String, String> m = base();
        m.remove("rollcall.policy.type");
        assertThatThrownBy(() -> build(m))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.policy.type is not set")
                .hasMessageContaining("[any]");
        Map<String, String> n = base();
        n.remove("rollcall.discovery.type");
        assertThatThrownBy(() -> build(n))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.type is not set");
    }

    @Test
    void malformedDurationNamesKeyValueAndExpectation() {
        Map<String, String> m = base();
        m.put("rollcall.probe.timeout", "fast");
        assertThatThrownBy(() -> build(m))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.timeout='fast'")
                .hasMessageContaining("a duration with a unit");
    }

    @Test
    void durationWithoutUnitIsRejectedRatherThanGuessed() {
        Map<String, String> m = base();
        m.put("rollcall.probe.timeout", "2");
        assertThatThrownBy(() -> build(m)).hasMessageContaining("rollcall.probe.timeout='2'");
    }

    @Test
    void concurrencyOutOfRangeIsRejected() {
        Map<String, String> m = base();
        m.put("rollcall.probe.concurrency", "0");
        assertThatThrownBy(() -> build(m))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.concurrency='0'")
                .hasMessageContaining("a whole number from 1 to 100000");
    }

    @Test
    void publishMaxRateOutOfRangeOrNotANumberNamesKeyValueAndRange() throws Exception {
        for (String bad : new String[] {"0", "1001", "fast", "-5"}) {
            Map<String, String> m = base();
            m.put("rollcall.publish.max-rate", bad);
            assertThatThrownBy(() -> build(m))
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("rollcall.publish.max-rate='" + bad + "'")
                    .hasMessageContaining("a whole number from 1 to 1000");
        }
        Map<String, String> m = base();
        m.put("rollcall.publish.max-rate", "1000");
        try (WorkerResolver resolver = build(m)) {
            assertThat(resolver.awaitVersion(1, Duration.ofSeconds(5)).number()).isEqualTo(1);
        }
    }

    @Test
    void backoffMaxBelowInitialIsRejected() {
        Map<String, String> m = base();
        m.put("rollcall.probe.backoff.initial", "5s");
        m.put("rollcall.probe.backoff.max", "1s");
        assertThatThrownBy(() -> build(m)).hasMessageContaining("rollcall.probe.backoff.max='1s'");
    }

    @Test
    void misspeltKeyFailsWithTheNearestKnownKey() {
        Map<String, String> m = base();
        m.put("rollcall.probe.timout", "5s");
        assertThatThrownBy(() -> build(m))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("unknown Rollcall configuration key")
                .hasMessageContaining("rollcall.probe.timout")
                .hasMessageContaining("did you mean rollcall.probe.timeout?");
    }

    @Test
    void theServersKeysInTheSameConfigurationAreLeftToTheServer() throws Exception {
        // rollcall serve builds its resolver from the file that also holds rollcall.serve.*.
        Map<String, String> m = base();
        m.put("rollcall.serve.port", "0");
        m.put("rollcall.serve.http-port", "0");
        try (WorkerResolver resolver = build(m)) {
            assertThat(resolver.awaitVersion(1, Duration.ofSeconds(5)).number()).isEqualTo(1);
        }
    }

    @Test
    void keysOfAnUnselectedBackendAreOnlyIgnored() throws Exception {
        Map<String, String> m = base();
        m.put("rollcall.discovery.etcd.endpoints", "http://127.0.0.1:2379");
        m.put("rollcall.policy.semver.range", "^1.4");
        try (WorkerResolver resolver = build(m)) {
            // Built, and running the selected types: the nothing backend's empty first set arrives,
            // and the any policy accepts a version that semver's ^1.4 would reject.
            assertThat(resolver.awaitVersion(1, Duration.ofSeconds(5)).counts().candidates()).isZero();
            assertThat(resolver.policy().check(WorkerInfo.of(
                    WorkerEndpoint.of("127.0.0.1", 7001), "0.1.0")).accepted()).isTrue();
        }
    }

    @Test
    void keysOfTheSelectedBackendThatItDoesNotReadAreUnknown() {
        Map<String, String> m = base();
        m.put("rollcall.discovery.nothing.dealy", "1s");
        assertThatThrownBy(() -> build(m))
                .hasMessageContaining("rollcall.discovery.nothing.dealy")
                .hasMessageContaining("did you mean rollcall.discovery.nothing.delay?");
    }

    @Test
    void leavesTheWorkersKeysInASharedFileToTheWorker() throws Exception {
        Map<String, String> m = base();
        m.put("rollcall.worker.register", "true");
        m.put("rollcall.worker.port", "7001");
        m.put("rollcall.discovery.nothing.registration.ttl", "5s");
        try (WorkerResolver resolver = build(m)) {
            // Built (none of the worker's keys is unknown to it), and running: its first set arrives.
            assertThat(resolver.awaitVersion(1, Duration.ofSeconds(5)).counts().candidates()).isZero();
        }
    }
}
