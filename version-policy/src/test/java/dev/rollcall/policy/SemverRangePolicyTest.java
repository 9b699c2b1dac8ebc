package dev.rollcall.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.rollcall.api.policy.Verdict;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class SemverRangePolicyTest {

    /** Range, versions it must accept, versions it must reject; expectations are npm's. */
    static Stream<Arguments> rangeForms() {
        return Stream.of(
                arguments("^1.4", List.of("1.4.0", "1.4.7", "1.9.9", "1.4.0+linux"),
                        List.of("1.3.9", "2.0.0", "0.1.0", "1.5.0-rc.1", "2.0.0-rc.1")),
                arguments("^1.4.0", List.of("1.4.0", "1.99.0"), List.of("1.3.99", "2.0.0")),
                arguments("^1.x", List.of("1.0.0", "1.9.0"), List.of("0.9.0", "2.0.0")),
                arguments("^0.2.3", List.of("0.2.3", "0.2.9"), List.of("0.2.2", "0.3.0", "1.0.0")),
                arguments("^0.0.3", List.of("0.0.3"), List.of("0.0.2", "0.0.4", "0.1.0")),
                // semver4j alone reads ^0 as >=0.0.0 and ^0.0 as nothing at all.
                arguments("^0", List.of("0.0.0", "0.9.9"), List.of("1.0.0")),
                arguments("^0.0", List.of("0.0.0", "0.0.9"), List.of("0.1.0")),
                arguments("^0.1", List.of("0.1.0", "0.1.9"), List.of("0.0.9", "0.2.0")),
                arguments("~1.4.2", List.of("1.4.2", "1.4.9"), List.of("1.4.1", "1.5.0", "2.0.0")),
                arguments("~1.4", List.of("1.4.0", "1.4.9"), List.of("1.3.9", "1.5.0")),
                arguments("~>1.4", List.of("1.4.0", "1.4.9"), List.of("1.3.9", "1.5.0")),
                arguments("~1", List.of("1.0.0", "1.9.9"), List.of("0.9.9", "2.0.0")),
                arguments(">=1.2 <2", List.of("1.2.0", "1.9.9"), List.of("1.1.9", "2.0.0", "2.0.0-rc.1")),
                arguments(">= 1.2   < 2", List.of("1.2.0", "1.9.9"), List.of("1.1.9", "2.0.0")),
                arguments(">1.2", List.of("1.3.0"), List.of("1.2.0", "1.2.9")),
                arguments(">1.2.3 <=1.4.0", List.of("1.2.4", "1.4.0"), List.of("1.2.3", "1.4.1")),
                arguments("<=1.4", List.of("0.0.0", "1.4.9"), List.of("1.5.0")),
                arguments("<1.4", List.of("1.3.9"), List.of("1.4.0")),
                arguments("1.x", List.of("1.0.0", "1.9.9"), List.of("0.9.9", "2.0.0", "1.5.0-rc.1")),
                arguments("1.X", List.of("1.0.0", "1.9.9"), List.of("0.9.9", "2.0.0")),
                arguments("1.*", List.of("1.0.0", "1.9.9"), List.of("0.9.9", "2.0.0")),
                arguments("1.x.x", List.of("1.0.0", "1.9.9"), List.of("0.9.9", "2.0.0")),
                arguments("1", List.of("1.0.0", "1.9.9"), List.of("0.9.9", "2.0.0")),
                arguments("1.2.x", List.of("1.2.0", "1.2.9"), List.of("1.1.9", "1.3.0")),
                // semver4j alone reads x, X, x.x.x, =* and ~* as nothing, and >=* and ^* as garbage.
                arguments("*", List.of("0.0.0", "1.0.0", "99.0.0"), List.of("1.0.0-rc.1")),
                arguments("x", List.of("0.0.0", "1.0.0", "99.0.0"), List.of("1.0.0-rc.1")),
                arguments("X", List.of("0.0.0", "99.0.0"), List.of("1.0.0-rc.1")),
                arguments("x.x.x", List.of("0.0.0", "99.0.0"), List.of("1.0.0-rc.1")),
                arguments(">=*", List.of("0.0.0", "99.0.0"), List.of("1.0.0-rc.1")),
                arguments("^*", List.of("0.0.0", "99.0.0"), List.of("1.0.0-rc.1")),
                arguments("~*", List.of("0.0.0", "99.0.0"), List.of("1.0.0-rc.1")),
                arguments("=*", List.of("0.0.0", "99.0.0"), List.of("1.0.0-rc.1")),
                arguments("1.2.3 - 1.4", List.of("1.2.3", "1.4.9"), List.of("1.2.2", "1.5.0")),
                arguments("1.2.3 - 1.4.0", List.of("1.2.3", "1.4.0"), List.of("1.2.2", "1.4.1")),
                arguments("1.2 - 2", List.of("1.2.0", "2.9.9"), List.of("1.1.9", "3.0.0")),
                arguments("* - 2", List.of("0.0.0", "2.9.9"), List.of("3.0.0")),
                // semver4j alone reads this as >=1.0.0 <0.0.0.
                arguments("1.0 - *", List.of("1.0.0", "99.0.0"), List.of("0.9.9")),
                arguments("^1.4 || ^2.1", List.of("1.4.0", "2.1.0"), List.of("1.3.0", "2.0.0", "3.0.0")),
                arguments("1.2.7 || >=1.2.9 <2.0.0", List.of("1.2.7", "1.2.9", "1.4.6"),
                        List.of("1.2.8", "2.0.0")),
                arguments("^1.4||~2.0.1", List.of("1.4.0", "2.0.1"), List.of("2.0.0", "2.1.0")),
                // semver4j alone drops the caret and the tilde here, keeping only the second comparator.
                arguments("^1.4 <1.6", List.of("1.4.0", "1.5.9"), List.of("1.3.0", "1.6.0")),
                arguments("~1.4 >=1.4.2", List.of("1.4.2", "1.4.9"), List.of("1.4.1", "1.5.0")),
                arguments("1.4.0", List.of("1.4.0", "v1.4.0", "1.4.0+build.7"), List.of("1.4.1", "1.4.0-rc.1")),
                arguments("=1.4.0", List.of("1.4.0"), List.of("1.4.1", "1.3.9")),
                arguments("v1.4.0", List.of("1.4.0"), List.of("1.4.1")),
                arguments("^v1.4", List.of("1.4.0", "1.9.0"), List.of("1.3.0", "2.0.0")),
                arguments(">=v1.2 <v2", List.of("1.2.0"), List.of("2.0.0")),
                // Without spaces the hyphen starts a pre-release: this is version 1.2.3-1.4.
                arguments("1.2.3-1.4", List.of("1.2.3-1.4"), List.of("1.2.3", "1.3.0", "1.4.0")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rangeForms")
    void acceptsExactlyTheVersionsInTheRange(String range, List<String> accepted, List<String> rejected) {
        SemverRangePolicy policy = SemverRangePolicy.of(range);

        for (String version : accepted) {
            assertThat(policy.check(Workers.reporting(version)).accepted())
                    .as("%s accepts %s", range, version).isTrue();
        }
        for (String version : rejected) {
            assertThat(policy.check(Workers.reporting(version)).accepted())
                    .as("%s rejects %s", range, version).isFalse();
        }
    }

    @Test
    void rejectsPreReleaseUnlessIncluded() {
        SemverRangePolicy excluding = SemverRangePolicy.of("^1.4");
        SemverRangePolicy including = SemverRangePolicy.of("^1.4", true);

        for (String preRelease : List.of("1.4.0-rc.1", "1.4.1-rc.1", "1.5.0-alpha")) {
            assertThat(excluding.check(Workers.reporting(preRelease)).accepted()).as(preRelease).isFalse();
            assertThat(including.check(Workers.reporting(preRelease)).accepted()).as(preRelease).isTrue();
        }
        // Still outside: ^1.4 ends before every pre-release of 2.0.0, and 1.3.9-rc.1 is below 1.4.0.
        for (String outside : List.of("2.0.0-rc.1", "1.3.9-rc.1")) {
            assertThat(including.check(Workers.reporting(outside)).accepted()).as(outside).isFalse();
        }
        assertThat(including.check(Workers.reporting("1.5.0")).accepted()).isTrue();
    }

    @Test
    void acceptsPreReleaseOfTheSameVersionThatAComparatorNames() {
        SemverRangePolicy policy = SemverRangePolicy.of(">=1.5.0-rc.0");

        assertThat(policy.check(Workers.reporting("1.5.0-rc.0")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.5.0-rc.1")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.5.0")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.6.0")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.6.0-rc.1")).accepted()).isFalse();
        assertThat(policy.check(Workers.reporting("1.5.0-alpha")).accepted()).isFalse();
    }

    @Test
    void preReleaseRuleAppliesPerAlternative() {
        SemverRangePolicy policy = SemverRangePolicy.of("^1.4.0-rc.0 || ^2");

        assertThat(policy.check(Workers.reporting("1.4.0-rc.1")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.5.0-rc.1")).accepted()).isFalse();
        assertThat(policy.check(Workers.reporting("2.1.0-rc.1")).accepted()).isFalse();
    }

    @Test
    void reasonSaysWhichRangeTheVersionIsOutside() {
        Verdict verdict = SemverRangePolicy.of("^1.4.0").check(Workers.reporting("2.0.0"));

        assertThat(verdict.accepted()).isFalse();
        assertThat(verdict.reason()).isEqualTo("version '2.0.0' is outside ^1.4.0");
    }

    /** semver4j compares numeric pre-release identifiers as longs and throws past them; check() must not. */
    @Test
    void aWorkerWhosePreReleaseNumberOverflowsALongIsRejectedWithAReason() {
        SemverRangePolicy policy = SemverRangePolicy.of(">=1.4.0-1 <2");

        Verdict verdict = policy.check(Workers.reporting("1.4.0-99999999999999999999"));

        assertThat(verdict.accepted()).isFalse();
        assertThat(verdict.reason()).isEqualTo("version '1.4.0-99999999999999999999' has a pre-release number larger"
                + " than 9223372036854775807, which cannot be compared");
    }

    @Test
    void aWorkerWhosePreReleaseHasADigitRunPastALongIsRejectedWithAReason() {
        SemverRangePolicy policy = SemverRangePolicy.of(">=1.4.0-rc1 <2");

        Verdict verdict = policy.check(Workers.reporting("1.4.0-rc99999999999999999999"));

        assertThat(verdict.accepted()).isFalse();
        assertThat(verdict.reason()).contains("has a pre-release number larger than 9223372036854775807");
    }

    @Test
    void reasonExplainsAnExcludedPreRelease() {
        SemverRangePolicy policy = SemverRangePolicy.of("^1.4.0");

        assertThat(policy.check(Workers.reporting("1.5.0-rc.1")).reason()).isEqualTo(
                "version '1.5.0-rc.1' is outside ^1.4.0 (it is a pre-release, and pre-releases are not included)");
        // Including pre-releases would not help 2.0.0-rc.1, so the reason does not suggest it.
        assertThat(policy.check(Workers.reporting("2.0.0-rc.1")).reason())
                .isEqualTo("version '2.0.0-rc.1' is outside ^1.4.0");
    }

    static Stream<Arguments> versionsThatAreNotSemver() {
        return Stream.of(
                arguments("banana", "version 'banana' is not semantic versioning"),
                arguments("1.4", "version '1.4' is not semantic versioning"),
                arguments("1", "version '1' is not semantic versioning"),
                arguments("V1.4.0", "version 'V1.4.0' is not semantic versioning"),
                arguments("vv1.4.0", "version 'vv1.4.0' is not semantic versioning"),
                arguments("=1.4.0", "version '=1.4.0' is not semantic versioning"),
                arguments("01.4.0", "version '01.4.0' is not semantic versioning"),
                arguments("1.4.0.0", "version '1.4.0.0' is not semantic versioning"),
                arguments("1.4.0-", "version '1.4.0-' is not semantic versioning"),
                arguments("1.4.0-01", "version '1.4.0-01' is not semantic versioning"),
                arguments(" 1.4.0", "version ' 1.4.0' is not semantic versioning"),
                arguments("1.4.0\n", "version '1.4.0\\n' is not semantic versioning"),
                arguments("   ", "version '   ' is not semantic versioning"),
                arguments("99999999999.0.0", "version '99999999999.0.0' is not semantic versioning"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("versionsThatAreNotSemver")
    void rejectsVersionThatIsNotSemanticVersioning(String version, String reason) {
        // *: were the version read leniently, it would be accepted.
        Verdict verdict = SemverRangePolicy.of("*").check(Workers.reporting(version));

        assertThat(verdict.accepted()).isFalse();
        assertThat(verdict.reason()).isEqualTo(reason);
    }

    @Test
    void rejectsWorkerThatReportsNoVersion() {
        Verdict verdict = SemverRangePolicy.of("*").check(Workers.reporting(""));

        assertThat(verdict.accepted()).isFalse();
        assertThat(verdict.reason()).isEqualTo("no version (the worker never set one) is outside *");
    }

    @Test
    void treatsLeadingLowercaseVAsPartOfTheTagNotTheVersion() {
        SemverRangePolicy policy = SemverRangePolicy.of("^1.4");

        assertThat(policy.check(Workers.reporting("v1.4.0")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("v1.5.0-rc.1")).accepted()).isFalse();
        assertThat(policy.check(Workers.reporting("v2.0.0")).reason()).isEqualTo("version 'v2.0.0' is outside ^1.4");
    }

    @Test
    void ignoresBuildMetadata() {
        SemverRangePolicy policy = SemverRangePolicy.of("1.4.0+linux");

        assertThat(policy.check(Workers.reporting("1.4.0")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.4.0+darwin")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.4.1+linux")).accepted()).isFalse();
    }

    @Test
    void describesRangeAndPreReleaseSetting() {
        assertThat(SemverRangePolicy.of("^1.4.0").description()).isEqualTo("semver ^1.4.0");
        assertThat(SemverRangePolicy.of("^1.4.0", true).description())
                .isEqualTo("semver ^1.4.0 (pre-releases included)");
        assertThat(SemverRangePolicy.of("  >=1.2 \t <2  ").description()).isEqualTo("semver >=1.2 <2");
        assertThat(SemverRangePolicy.of("^1.4.0").toString()).isEqualTo("semver ^1.4.0");
    }

    @Test
    void exposesRangeAndPreReleaseSetting() {
        SemverRangePolicy policy = SemverRangePolicy.of(" ~1.4.2 ", true);

        assertThat(policy.range()).isEqualTo("~1.4.2");
        assertThat(policy.includesPrerelease()).isTrue();
        assertThat(SemverRangePolicy.of("~1.4.2").includesPrerelease()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"^^1", ">=banana", "", "   "})
    void factoryRejectsInvalidRangeNamingIt(String range) {
        assertThatThrownBy(() -> SemverRangePolicy.of(range))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid semver range '" + range + "': ");
    }

    @Test
    void factoryRejectsNullRange() {
        assertThatThrownBy(() -> SemverRangePolicy.of(null)).isInstanceOf(NullPointerException.class);
    }
}
