package dev.rollcall.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Ranges that semver4j 6.0.0 would quietly turn into "nothing" or "everything" must fail instead. */
class SemverRangeValidationTest {

    private static final String RANGE_KEY = "rollcall.policy.semver.range";

    /** Every invalid range, with the part of the message that says what is wrong with it. */
    static Stream<Arguments> invalidRanges() {
        return Stream.concat(malformedRanges(), rangesMatchingNoVersion());
    }

    /** Text that is not npm range syntax, or that this module refuses as ambiguous. */
    static Stream<Arguments> malformedRanges() {
        return Stream.of(
                // semver4j: match nothing.
                arguments("^^1", "'^^1' is not a version or comparator"),
                arguments(">=banana", "'>=banana' is not a version or comparator"),
                arguments("banana", "'banana' is not a version or comparator"),
                arguments("^1.4 banana", "'banana' is not a version or comparator"),
                arguments("1.4.0.0", "'1.4.0.0' is not a version or comparator"),
                arguments("01.2.3", "'01.2.3' is not a version or comparator"),
                arguments("^1.4.0-", "'^1.4.0-' is not a version or comparator"),
                arguments("^1.4,^2", "'^1.4,^2' is not a version or comparator"),
                arguments("&&", "'&&' is not a version or comparator"),
                arguments("V1.4.0", "'V1.4.0' is not a version or comparator"),
                arguments("=>1.2", "'=>1.2' is not a version or comparator"),
                // semver4j: drop the garbage and keep the rest.
                arguments(">=1.2 banana", "'banana' is not a version or comparator"),
                arguments("^1.4 || banana", "'banana' is not a version or comparator"),
                arguments(">=1.2 <2 ||| 3", "'|' is not a version or comparator"),
                arguments("[1.0,2.0)", "'[1.0,2.0)' is not a version or comparator"),
                // semver4j: an empty alternative matches everything.
                arguments("|| ^1.4", "an alternative next to '||' is empty"),
                arguments("^1.4 ||", "an alternative next to '||' is empty"),
                arguments("^1.4 || || ^2", "an alternative next to '||' is empty"),
                // Broken hyphen ranges and operators.
                arguments("1.2.3 -", "is not a hyphen range"),
                arguments("- 1.4", "is not a hyphen range"),
                arguments("1.2.3 - 1.4 - 2", "is not a hyphen range"),
                arguments("1 - 2 >=1", "is not a hyphen range"),
                arguments(">=1.2 - 2", "'>=1.2' cannot be an end of a hyphen range"),
                arguments("1.2.3 -1.4", "'-1.4' is not a version or comparator"),
                arguments(">=", "'>=' has no version after it"),
                arguments("^1.4 ^", "'^' has no version after it"),
                arguments("1.x.3", "'1.x.3' has a number after a wildcard"),
                arguments("*.2", "'*.2' has a number after a wildcard"),
                arguments("1.2.x-rc.1", "'1.2.x-rc.1' has a pre-release or build without a full version"),
                arguments("99999999999.0.0", "'99999999999.0.0' has a number larger than 2147483646"),
                arguments("^2147483647", "'^2147483647' has a number larger than 2147483646"));
    }

    /** Valid syntax, but no release can match. */
    static Stream<Arguments> rangesMatchingNoVersion() {
        return Stream.of(
                arguments(">2 <1", "'>2 <1' matches no version"),
                arguments("1.4.0 - 1.2.0", "'1.4.0 - 1.2.0' matches no version"),
                arguments("^1.4 ^2", "'^1.4 ^2' matches no version"),
                arguments("~1.4.2 ~1.5", "'~1.4.2 ~1.5' matches no version"),
                arguments("<0.0.0", "'<0.0.0' matches no version"),
                arguments(">1.2.3 <1.2.4", "'>1.2.3 <1.2.4' matches no version"),
                arguments("<*", "'<*' matches no version"),
                arguments(">*", "'>*' matches no version"),
                arguments("^1.4 || >3 <2", "'>3 <2' matches no version"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidRanges")
    void factoryRejectsInvalidRange(String range, String why) {
        assertThatThrownBy(() -> SemverRangePolicy.of(range))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid semver range '" + range + "': ")
                .hasMessageContaining(why);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidRanges")
    void providerRejectsInvalidRangeNamingKeyAndValue(String range, String why) {
        Settings settings = Settings.of(Map.of(RANGE_KEY, range)).scope("rollcall.policy.semver.");

        assertThatThrownBy(() -> new SemverRangePolicyProvider().create(settings))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(RANGE_KEY))
                .hasMessageStartingWith(RANGE_KEY + "='" + range.strip() + "': ")
                .hasMessageContaining(why);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedRanges")
    void includingPreReleasesDoesNotMakeMalformedRangesValid(String range, String why) {
        assertThatThrownBy(() -> SemverRangePolicy.of(range, true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(why);
    }

    @Test
    void rangeThatHoldsOnlyPreReleasesIsValidWhenTheyAreIncluded() {
        SemverRangePolicy policy = SemverRangePolicy.of(">1.2.3 <1.2.4", true);

        assertThat(policy.check(Workers.reporting("1.2.4-rc.1")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.2.4")).accepted()).isFalse();
        assertThat(policy.check(Workers.reporting("1.2.3")).accepted()).isFalse();
    }

    @Test
    void rangeThatIsEmptyEvenWithPreReleasesFailsEitherWay() {
        assertThatThrownBy(() -> SemverRangePolicy.of(">2 <1", true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'>2 <1' matches no version");
    }
}
