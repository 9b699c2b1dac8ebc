package dev.rollcall.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The {@code rollout} and {@code prefer} policies as configured through properties and builders. */
class RolloutAndPreferConfigTest {

    private static final String ROLLOUT = "rollcall.policy.rollout.";
    private static final String PREFER = "rollcall.policy.prefer.";

    private static VersionPolicy rollout(Map<String, String> values) {
        return new RolloutPolicyProvider().create(Settings.of(values).scope(ROLLOUT));
    }

    private static VersionPolicy prefer(Map<String, String> values) {
        return new PreferPolicyProvider().create(Settings.of(values).scope(PREFER));
    }

    @Test
    void serviceLoaderFindsRolloutAndPrefer() {
        Map<String, Class<?>> byType = ServiceLoader.load(VersionPolicyProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .collect(Collectors.toMap(VersionPolicyProvider::type, Object::getClass));

        assertThat(byType).containsEntry("rollout", RolloutPolicyProvider.class)
                .containsEntry("prefer", PreferPolicyProvider.class)
                .containsEntry("semver", SemverRangePolicyProvider.class)
                .containsEntry("exact", ExactVersionPolicyProvider.class);
    }

    @Test
    void rolloutReadsItsKeys() {
        VersionPolicy policy = rollout(Map.of(ROLLOUT + "range", " ^2 ", ROLLOUT + "min-workers", "5",
                ROLLOUT + "min-fraction", "0.60", ROLLOUT + "include-prerelease", "true"));

        assertThat(policy).isInstanceOfSatisfying(RolloutPolicy.class, p -> {
            assertThat(p.range()).isEqualTo("^2");
            assertThat(p.minWorkers()).hasValue(5);
            assertThat(p.minFraction()).hasValue(0.6);
            assertThat(p.includesPrerelease()).isTrue();
        });
        assertThat(policy.description()).isEqualTo("rollout ^2 (min-workers 5, min-fraction 0.6, pre-releases included)");
    }

    @Test
    void rolloutNeedsOnlyOneThreshold() {
        assertThat(rollout(Map.of(ROLLOUT + "range", "^2", ROLLOUT + "min-workers", "3")).description())
                .isEqualTo("rollout ^2 (min-workers 3)");
        assertThat(rollout(Map.of(ROLLOUT + "range", "^2", ROLLOUT + "min-fraction", "1")).description())
                .isEqualTo("rollout ^2 (min-fraction 1)");
    }

    @Test
    void rolloutWithoutAThresholdNamesBothKeys() {
        assertThatThrownBy(() -> rollout(Map.of(ROLLOUT + "range", "^2")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(ROLLOUT + "min-workers"))
                .hasMessageStartingWith("neither rollcall.policy.rollout.min-workers nor"
                        + " rollcall.policy.rollout.min-fraction is set");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "three", "2.5", "99999999999"})
    void rolloutRefusesBadMinWorkers(String value) {
        assertThatThrownBy(() -> rollout(Map.of(ROLLOUT + "range", "^2", ROLLOUT + "min-workers", value)))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(ROLLOUT + "min-workers"))
                .hasMessageStartingWith(ROLLOUT + "min-workers='" + value + "': expected a whole number from 1");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "0.0", "-0.5", "1.01", "60%", "NaN", "half"})
    void rolloutRefusesBadMinFraction(String value) {
        assertThatThrownBy(() -> rollout(Map.of(ROLLOUT + "range", "^2", ROLLOUT + "min-fraction", value)))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(ROLLOUT + "min-fraction"))
                .hasMessage(ROLLOUT + "min-fraction='" + value
                        + "': expected a fraction greater than 0 and at most 1, such as 0.6");
    }

    @Test
    void rolloutNeedsAValidRange() {
        assertThatThrownBy(() -> rollout(Map.of(ROLLOUT + "min-workers", "3")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(ROLLOUT + "range"))
                .hasMessageStartingWith(ROLLOUT + "range is not set: expected an npm range");
        assertThatThrownBy(() -> rollout(Map.of(ROLLOUT + "range", ">2 <1", ROLLOUT + "min-workers", "3")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(ROLLOUT + "range"))
                .hasMessageStartingWith(ROLLOUT + "range='>2 <1': '>2 <1' matches no version; expected an npm range");
    }

    @Test
    void rolloutRefusesIncludePrereleaseThatIsNotABoolean() {
        assertThatThrownBy(() -> rollout(Map.of(ROLLOUT + "range", "^2", ROLLOUT + "min-workers", "3",
                ROLLOUT + "include-prerelease", "yes")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(ROLLOUT + "include-prerelease"));
    }

    @Test
    void rolloutReadsEveryKeyItSupports() {
        RecordingSettings settings = new RecordingSettings(Map.of(ROLLOUT + "range", "^2", ROLLOUT + "min-workers", "3"));

        new RolloutPolicyProvider().create(settings.scope(ROLLOUT));

        assertThat(settings.read()).containsExactlyInAnyOrder(ROLLOUT + "range", ROLLOUT + "min-workers",
                ROLLOUT + "min-fraction", ROLLOUT + "include-prerelease");
    }

    @Test
    void eachRolloutPolicyFromTheProviderHasItsOwnState() {
        Map<String, String> values = Map.of(ROLLOUT + "range", "^2", ROLLOUT + "min-fraction", "0.5");
        VersionPolicy first = rollout(values);
        VersionPolicy second = rollout(values);
        SteppedFleet fleet = new SteppedFleet(4, "2.1.0");
        first.select(fleet.workers());

        // 2.1.0 has 1 of 4: the first policy keeps it, the second has no current cohort to keep.
        fleet.set(0, "2.0.0").set(1, "2.0.0").set(2, "2.0.0");
        assertThat(first.select(fleet.workers()).cohort()).contains("2.1.0");
        assertThat(second.select(fleet.workers()).cohort()).contains("2.0.0");
    }

    @Test
    void rolloutBuilderRefusesBadArgumentsNamingThem() {
        assertThatThrownBy(() -> RolloutPolicy.builder().minWorkers(3).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessage("a rollout policy needs a range");
        assertThatThrownBy(() -> RolloutPolicy.builder().range("^2").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a rollout policy needs minWorkers, minFraction or both");
        assertThatThrownBy(() -> RolloutPolicy.builder().minWorkers(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("minWorkers must be at least 1, not 0");
        for (double bad : new double[] {0, -0.1, 1.5, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThatThrownBy(() -> RolloutPolicy.builder().minFraction(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("minFraction must be greater than 0 and at most 1, not " + bad);
        }
        assertThatThrownBy(() -> RolloutPolicy.builder().range("^^2").minWorkers(1).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid semver range '^^2': '^^2' is not a version or comparator");
    }

    @Test
    void preferReadsItsKeys() {
        VersionPolicy policy = prefer(Map.of(PREFER + "ranges", "^2.1, ~2.0 || ~1.9,,",
                PREFER + "min-workers", "2", PREFER + "include-prerelease", "false"));

        assertThat(policy).isInstanceOfSatisfying(PreferPolicy.class, p -> {
            assertThat(p.ranges()).containsExactly("^2.1", "~2.0 || ~1.9");
            assertThat(p.minWorkers()).isEqualTo(2);
            assertThat(p.includesPrerelease()).isFalse();
        });
        assertThat(policy.description()).isEqualTo("prefer ^2.1, ~2.0 || ~1.9 (min-workers 2)");
    }

    @Test
    void preferNamesTheKeyAndTheBadElement() {
        assertThatThrownBy(() -> prefer(Map.of(PREFER + "ranges", "^2.1, ^^2")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(PREFER + "ranges"))
                .hasMessageStartingWith(PREFER + "ranges='^2.1, ^^2': element '^^2': '^^2' is not a version or comparator;"
                        + " expected a comma-separated list of npm ranges");
    }

    @Test
    void preferNeedsRanges() {
        assertThatThrownBy(() -> prefer(Map.of()))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(PREFER + "ranges"))
                .hasMessageStartingWith(PREFER + "ranges is not set: expected a comma-separated list of npm ranges");
        assertThatThrownBy(() -> prefer(Map.of(PREFER + "ranges", ", ,")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(PREFER + "ranges"))
                .hasMessageStartingWith(PREFER + "ranges=', ,': expected a comma-separated list of npm ranges");
    }

    @Test
    void preferRefusesBadMinWorkers() {
        assertThatThrownBy(() -> prefer(Map.of(PREFER + "ranges", "^2", PREFER + "min-workers", "0")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(PREFER + "min-workers"));
    }

    @Test
    void preferReadsEveryKeyItSupports() {
        RecordingSettings settings = new RecordingSettings(Map.of(PREFER + "ranges", "^2.1, ^2.0"));

        new PreferPolicyProvider().create(settings.scope(PREFER));

        assertThat(settings.read()).containsExactlyInAnyOrder(PREFER + "ranges", PREFER + "min-workers",
                PREFER + "include-prerelease");
    }
}
