package dev.rollcall.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

class CapabilitiesPolicyTest {

    private static int nextPort = 7101;

    private static synchronized WorkerInfo worker(String version, String... capabilities) {
        return new WorkerInfo(WorkerEndpoint.of("worker.test", nextPort++), version, "", Map.of(), List.of(),
                Capabilities.of(capabilities));
    }

    private static VersionPolicy configured(Map<String, String> values) {
        return new CapabilitiesPolicyProvider().create(Settings.of(values).scope("rollcall.policy.capabilities."));
    }

    @Test
    void aWorkerWithoutTheBaselineIsRejectedWithWhatItLacksAndAnyVersionMeetingItIsKept() {
        CapabilitiesPolicy policy = CapabilitiesPolicy.of(Requirements.of("plan-protocol>=3"));

        assertThat(policy.check(worker("1.4.0", "plan-protocol=2")).reason())
                .isEqualTo("lacks plan-protocol>=3 (has plan-protocol=2)");
        assertThat(policy.check(worker("1.4.0")).reason()).isEqualTo("lacks plan-protocol>=3");
        assertThat(policy.check(worker("1.4.0", "plan-protocol=3", "udf:geo_distance")).accepted()).isTrue();
        assertThat(policy.check(worker("", "plan-protocol=4")).accepted()).as("no version at all").isTrue();
        assertThat(policy.perWorker()).isTrue();
        assertThat(policy.description()).isEqualTo("capabilities plan-protocol>=3");
    }

    @Test
    void aRangeMustHoldAsWellAsTheBaseline() {
        VersionPolicy policy = configured(Map.of(
                "rollcall.policy.capabilities.baseline", " plan-protocol>=3 , udf:geo_distance",
                "rollcall.policy.capabilities.range", "^1.4"));

        assertThat(policy.description()).isEqualTo("capabilities plan-protocol>=3, udf:geo_distance within semver ^1.4");
        assertThat(policy.check(worker("1.4.0", "plan-protocol=3", "udf:geo_distance")).accepted()).isTrue();
        assertThat(policy.check(worker("2.0.0", "plan-protocol=3", "udf:geo_distance")).reason())
                .isEqualTo("version '2.0.0' is outside ^1.4");
        assertThat(policy.check(worker("1.4.0", "plan-protocol=3")).reason()).isEqualTo("lacks udf:geo_distance");
        assertThat(policy.perWorker()).isTrue();
    }

    /** A cohort is counted among the workers that meet the baseline: the others cannot give a quorum. */
    @Test
    void rolloutWithinTheBaselineCountsOnlyTheWorkersThatMeetIt() {
        CapabilitiesPolicy policy = CapabilitiesPolicy.of(Requirements.of("plan-protocol>=3"),
                RolloutPolicy.builder().range("^2").minWorkers(2).build());
        List<WorkerInfo> probed = new ArrayList<>();
        probed.add(worker("2.0.0", "plan-protocol=3"));
        probed.add(worker("2.0.0", "plan-protocol=3"));
        // Three workers of 2.1.0, but only one that speaks the plan protocol: 2.1.0 has no quorum.
        probed.add(worker("2.1.0", "plan-protocol=3"));
        probed.add(worker("2.1.0", "plan-protocol=2"));
        probed.add(worker("2.1.0"));

        Selection selection = policy.select(probed);

        assertThat(policy.perWorker()).isFalse();
        assertThat(selection.cohort()).contains("2.0.0");
        assertThat(selection.accepted()).containsExactly(probed.get(0), probed.get(1));
        assertThat(selection.rejected()).extracting(Selection.Rejection::worker)
                .containsExactlyInAnyOrder(probed.get(2), probed.get(3), probed.get(4));
        assertThat(selection.rejected()).extracting(Selection.Rejection::reason).contains(
                "lacks plan-protocol>=3 (has plan-protocol=2)", "lacks plan-protocol>=3");
        assertThat(policy.description()).isEqualTo("capabilities plan-protocol>=3 within rollout ^2 (min-workers 2)");
    }

    @Test
    void serviceLoaderFindsTheCapabilitiesType() {
        assertThat(ServiceLoader.load(VersionPolicyProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.type().equals("capabilities")).toList())
                .singleElement().isInstanceOf(CapabilitiesPolicyProvider.class);
    }

    @Test
    void theBaselineIsRequired() {
        for (String blank : new String[] {"", "  "}) {
            assertThatThrownBy(() -> configured(Map.of("rollcall.policy.capabilities.baseline", blank)))
                    .isInstanceOfSatisfying(ConfigurationException.class,
                            e -> assertThat(e.key()).isEqualTo("rollcall.policy.capabilities.baseline"))
                    .hasMessageStartingWith("rollcall.policy.capabilities.baseline is not set: expected requirements");
        }
        assertThatThrownBy(() -> CapabilitiesPolicy.of(Requirements.none()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a baseline");
    }

    @Test
    void aMalformedBaselineIsRefusedNamingTheKeyTheValueAndTheRequirement() {
        assertThatThrownBy(() -> configured(Map.of("rollcall.policy.capabilities.baseline",
                "udf:geo_distance, plan-protocol>=banana")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo("rollcall.policy.capabilities.baseline"))
                .hasMessageStartingWith("rollcall.policy.capabilities.baseline='udf:geo_distance, plan-protocol>=banana':"
                        + " requirement 'plan-protocol>=banana': range '>=banana' is not an npm range");
        assertThatThrownBy(() -> configured(Map.of("rollcall.policy.capabilities.baseline", "udf:\u001b[31mred")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.policy.capabilities.baseline=")
                .hasMessageNotContaining("\u001b");
        assertThatThrownBy(() -> configured(Map.of("rollcall.policy.capabilities.baseline", "plan-protocol>=3,")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageStartingWith("rollcall.policy.capabilities.baseline='plan-protocol>=3,': requirements 'plan-protocol>=3,': item 2 of 2 is empty");
    }

    @Test
    void aMalformedRangeIsRefusedNamingItsKey() {
        assertThatThrownBy(() -> configured(Map.of(
                "rollcall.policy.capabilities.baseline", "plan-protocol>=3",
                "rollcall.policy.capabilities.range", "^^1")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo("rollcall.policy.capabilities.range"))
                .hasMessageStartingWith("rollcall.policy.capabilities.range='^^1': ")
                .hasMessageContaining("expected an npm range");
    }

    @Test
    void readsEveryKeyItSupports() {
        RecordingSettings settings = new RecordingSettings(Map.of(
                "rollcall.policy.capabilities.baseline", "plan-protocol>=3"));

        new CapabilitiesPolicyProvider().create(settings.scope("rollcall.policy.capabilities."));

        assertThat(settings.read()).containsExactlyInAnyOrder(
                "rollcall.policy.capabilities.baseline", "rollcall.policy.capabilities.range");
    }
}
