package dev.rollcall.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class VersionPolicyProvidersTest {

    private static VersionPolicy semver(Map<String, String> values) {
        return new SemverRangePolicyProvider().create(Settings.of(values).scope("rollcall.policy.semver."));
    }

    private static VersionPolicy exact(Map<String, String> values) {
        return new ExactVersionPolicyProvider().create(Settings.of(values).scope("rollcall.policy.exact."));
    }

    @Test
    void serviceLoaderFindsExactAndSemver() {
        Map<String, Class<?>> byType = ServiceLoader.load(VersionPolicyProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .collect(Collectors.toMap(VersionPolicyProvider::type, Object::getClass));

        assertThat(byType).containsEntry("exact", ExactVersionPolicyProvider.class)
                .containsEntry("semver", SemverRangePolicyProvider.class);
    }

    @Test
    void semverReadsRangeFromItsScope() {
        VersionPolicy policy = semver(Map.of("rollcall.policy.semver.range", "^1.4"));

        assertThat(policy).isInstanceOf(SemverRangePolicy.class);
        assertThat(policy.description()).isEqualTo("semver ^1.4");
        assertThat(policy.check(Workers.reporting("1.4.0")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.5.0-rc.1")).accepted()).isFalse();
        assertThat(policy.check(Workers.reporting("2.0.0")).accepted()).isFalse();
    }

    @Test
    void semverIncludesPreReleasesWhenAsked() {
        VersionPolicy policy = semver(Map.of(
                "rollcall.policy.semver.range", "^1.4",
                "rollcall.policy.semver.include-prerelease", "TRUE"));

        assertThat(policy.description()).isEqualTo("semver ^1.4 (pre-releases included)");
        assertThat(policy.check(Workers.reporting("1.5.0-rc.1")).accepted()).isTrue();
    }

    @Test
    void semverRejectsIncludePrereleaseThatIsNotABoolean() {
        assertThatThrownBy(() -> semver(Map.of(
                "rollcall.policy.semver.range", "^1.4",
                "rollcall.policy.semver.include-prerelease", "yes")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo("rollcall.policy.semver.include-prerelease"))
                .hasMessageContaining("'yes'");
    }

    @Test
    void semverNeedsARange() {
        for (Map<String, String> values : Set.of(
                Map.<String, String>of(),
                Map.of("rollcall.policy.semver.range", ""),
                Map.of("rollcall.policy.semver.range", "   "))) {
            assertThatThrownBy(() -> semver(values))
                    .as("%s", values)
                    .isInstanceOfSatisfying(ConfigurationException.class,
                            e -> assertThat(e.key()).isEqualTo("rollcall.policy.semver.range"))
                    .hasMessageStartingWith("rollcall.policy.semver.range is not set: expected an npm range");
        }
    }

    @Test
    void semverReadsEveryKeyItSupports() {
        RecordingSettings settings = new RecordingSettings(Map.of("rollcall.policy.semver.range", "^1.4"));

        new SemverRangePolicyProvider().create(settings.scope("rollcall.policy.semver."));

        assertThat(settings.read()).containsExactlyInAnyOrder(
                "rollcall.policy.semver.range", "rollcall.policy.semver.include-prerelease");
    }

    @Test
    void exactReadsOneVersion() {
        VersionPolicy policy = exact(Map.of("rollcall.policy.exact.version", " 1.4.0 "));

        assertThat(policy).isInstanceOf(ExactVersionPolicy.class);
        assertThat(policy.description()).isEqualTo("exact 1.4.0");
        assertThat(policy.check(Workers.reporting("1.4.0")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.4.1")).accepted()).isFalse();
    }

    @Test
    void exactReadsCommaSeparatedVersions() {
        VersionPolicy policy = exact(Map.of("rollcall.policy.exact.versions", "1.4.0, 1.4.1,,"));

        assertThat(((ExactVersionPolicy) policy).versions()).containsExactly("1.4.0", "1.4.1");
        assertThat(policy.check(Workers.reporting("1.4.1")).accepted()).isTrue();
    }

    /** A datafusion-distributed worker that never called with_version() answers "": said with a key, not a blank value. */
    @Test
    void exactAcceptsNoVersionWhenAcceptNoVersionIsTrue() {
        VersionPolicy alone = exact(Map.of("rollcall.policy.exact.accept-no-version", "true"));
        assertThat(alone.description()).isEqualTo("exact (no version)");
        assertThat(alone.check(Workers.reporting("")).accepted()).isTrue();
        assertThat(alone.check(Workers.reporting("1.4.0")).reason()).isEqualTo("version '1.4.0' is not (no version)");

        VersionPolicy withOne = exact(Map.of("rollcall.policy.exact.version", "1.4.0",
                "rollcall.policy.exact.accept-no-version", "true"));
        assertThat(withOne.check(Workers.reporting("")).accepted()).isTrue();
        assertThat(withOne.check(Workers.reporting("1.4.0")).accepted()).isTrue();
        assertThat(withOne.check(Workers.reporting("1.4.1")).reason())
                .isEqualTo("version '1.4.1' is not one of [1.4.0, (no version)]");

        assertThat(exact(Map.of("rollcall.policy.exact.version", "1.4.0")).check(Workers.reporting("")).reason())
                .as("without the key").isEqualTo("no version (the worker never set one) is not 1.4.0");
        assertThatThrownBy(() -> exact(Map.of("rollcall.policy.exact.accept-no-version", "yes")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.policy.exact.accept-no-version").hasMessageContaining("'yes'");
    }

    @Test
    void exactNeedsVersionOrVersions() {
        assertThatThrownBy(() -> exact(Map.of()))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo("rollcall.policy.exact.version"))
                .hasMessageStartingWith("rollcall.policy.exact.version is not set")
                .hasMessageContaining("rollcall.policy.exact.versions")
                .hasMessageContaining("rollcall.policy.exact.accept-no-version=true");
    }

    @Test
    void exactRefusesBothVersionAndVersions() {
        assertThatThrownBy(() -> exact(Map.of(
                "rollcall.policy.exact.version", "1.4.0",
                "rollcall.policy.exact.versions", "1.4.0,1.4.1")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("rollcall.policy.exact.version and rollcall.policy.exact.versions are both set:"
                        + " set only one of them");
    }

    @Test
    void exactRefusesAListUnderVersion() {
        assertThatThrownBy(() -> exact(Map.of("rollcall.policy.exact.version", "1.4.0,1.4.1")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo("rollcall.policy.exact.version"))
                .hasMessageStartingWith("rollcall.policy.exact.version='1.4.0,1.4.1': expected one version")
                .hasMessageContaining("rollcall.policy.exact.versions");
    }

    @Test
    void exactRefusesVersionsThatListNothing() {
        assertThatThrownBy(() -> exact(Map.of("rollcall.policy.exact.versions", " , ,")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo("rollcall.policy.exact.versions"))
                .hasMessageStartingWith("rollcall.policy.exact.versions=', ,': expected a comma-separated list");
    }

    @Test
    void exactReadsEveryKeyItSupports() {
        for (String key : Set.of("rollcall.policy.exact.version", "rollcall.policy.exact.versions")) {
            RecordingSettings settings = new RecordingSettings(Map.of(key, "1.4.0"));

            new ExactVersionPolicyProvider().create(settings.scope("rollcall.policy.exact."));

            assertThat(settings.read()).as("with only %s set", key).containsExactlyInAnyOrder(
                    "rollcall.policy.exact.version", "rollcall.policy.exact.versions",
                    "rollcall.policy.exact.accept-no-version");
        }
    }
}
