package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A production coordinator never uses a staging worker, whatever its version and whatever the
 * policy: the selector rejects it before the policy sees it. Real workers on loopback, configured
 * as users configure Rollcall.
 */
class LabelSelectorResolverTest {

    private static final Duration WAIT = Duration.ofSeconds(15);
    private static RollcallWorker prod;
    private static RollcallWorker prodCanary;
    private static RollcallWorker staging;

    @BeforeAll
    static void fleet() throws Exception {
        prod = RollcallWorker.builder().version("1.4.0").label("env", "prod").label("zone", "eu-1").start();
        prodCanary = RollcallWorker.builder().version("1.4.0").label("env", "prod").label("tier", "canary").start();
        staging = RollcallWorker.builder().version("1.4.0").label("env", "staging").start();
    }

    @AfterAll
    static void stop() {
        for (RollcallWorker w : new RollcallWorker[] {prod, prodCanary, staging}) {
            if (w != null) {
                w.close();
            }
        }
    }

    private static String endpoints() {
        return prod.endpoint().url() + "," + prodCanary.endpoint().url() + "," + staging.endpoint().url();
    }

    private static FleetSnapshot settled(WorkerResolver r) {
        await().atMost(WAIT).until(() -> r.pin().counts().candidates() == 3 && r.pin().counts().pending() == 0);
        return r.pin();
    }

    private static String reason(FleetSnapshot s, RollcallWorker w) {
        return s.status(w.endpoint().url()).map(WorkerStatus::reason).orElseThrow();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
        "rollcall.policy.type=exact\nrollcall.policy.exact.version=1.4.0",
        "rollcall.policy.type=semver\nrollcall.policy.semver.range=^1.4.0",
        "rollcall.policy.type=rollout\nrollcall.policy.rollout.range=^1\nrollcall.policy.rollout.min-workers=1",
        "rollcall.policy.type=majority\nrollcall.policy.majority.min-workers=1",
    })
    void aWorkerOfAnotherEnvironmentIsNeverUsedWhateverThePolicy(String policy) throws Exception {
        RollcallConfig config = RollcallConfig.of(props("""
                rollcall.discovery.type=static
                rollcall.discovery.static.endpoints=%s
                rollcall.selector=env=prod,tier!=canary
                %s
                """.formatted(endpoints(), policy)));
        try (WorkerResolver r = WorkerResolver.fromConfig(config)) {
            FleetSnapshot s = settled(r);
            assertThat(s.compatibleEndpoints()).containsExactly(prod.endpoint());
            assertThat(reason(s, staging)).isEqualTo("label env='staging' does not match env=prod (rollcall.selector)");
            assertThat(reason(s, prodCanary)).isEqualTo("label tier='canary' does not match tier!=canary (rollcall.selector)");
            assertThat(s.selection().selector()).isEqualTo("env=prod,tier!=canary");
        }
    }

    @Test
    void theBuildersSelectorWorksTheSame() throws Exception {
        try (WorkerResolver r = WorkerResolver.builder().config(RollcallConfig.of(props("""
                rollcall.discovery.type=static
                rollcall.discovery.static.endpoints=%s
                rollcall.policy.type=exact
                rollcall.policy.exact.version=1.4.0
                """.formatted(endpoints())))).selector("env in (prod), !tier").build()) {
            assertThat(settled(r).compatibleEndpoints()).containsExactly(prod.endpoint());
        }
    }

    @Test
    void thePreferredZoneIsReportedAndUsedAlone() throws Exception {
        try (WorkerResolver r = WorkerResolver.fromConfig(RollcallConfig.of(props("""
                rollcall.discovery.type=static
                rollcall.discovery.static.endpoints=%s
                rollcall.policy.type=exact
                rollcall.policy.exact.version=1.4.0
                rollcall.selector=env=prod
                rollcall.prefer-labels=zone=eu-1
                rollcall.prefer-labels.min-workers=1
                """.formatted(endpoints()))))) {
            FleetSnapshot s = settled(r);
            assertThat(s.compatibleEndpoints()).containsExactly(prod.endpoint());
            assertThat(reason(s, prodCanary)).startsWith("held back: preferring zone=eu-1: 1 of 2 compatible workers");
            assertThat(s.selection().summary()).contains("preferring zone=eu-1");
        }
    }

    @Test
    void aMalformedSelectorFailsStartUpNamingTheKeyAndThePosition() {
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(props("""
                rollcall.discovery.type=static
                rollcall.discovery.static.endpoints=%s
                rollcall.policy.type=exact
                rollcall.policy.exact.version=1.4.0
                rollcall.selector=env=prod,zone in eu-1
                """.formatted(endpoints())))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.selector")
                .hasMessageContaining("at 17: expected '(' and a list of values, found 'e'");
        assertThatThrownBy(() -> WorkerResolver.builder().selector("env=prod,"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("at 9: expected a label key, found the end");
    }

    private static Map<String, String> props(String text) throws Exception {
        java.util.Properties p = new java.util.Properties();
        p.load(new java.io.StringReader(text));
        Map<String, String> m = new java.util.HashMap<>();
        p.stringPropertyNames().forEach(k -> m.put(k, p.getProperty(k)));
        return m;
    }
}
