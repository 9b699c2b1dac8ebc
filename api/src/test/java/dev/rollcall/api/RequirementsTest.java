package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a query needs comes from code, the command line, a {@code rollcall:} target and fleet API
 * requests: it is read as npm reads a range, matched against what workers have as npm would, and a
 * malformed one is refused with a message that names it, escaped and bounded.
 */
class RequirementsTest {

    private static boolean meets(String requirement, String... capabilities) {
        return Requirement.parse(requirement).isMetBy(Capabilities.of(capabilities));
    }

    @Test
    void aRequirementIsANameThenAnOptionalNpmRange() {
        Requirement r = Requirement.parse("plan-protocol>=3");
        assertThat(r.name()).isEqualTo("plan-protocol");
        assertThat(r.range()).isEqualTo(">=3");
        assertThat(Requirement.parse("datafusion ^55").range()).isEqualTo("^55");
        assertThat(Requirement.parse("datafusion 55.x || 56").toString()).isEqualTo("datafusion 55.x || 56");
        assertThat(Requirement.parse(" udf:geo_distance ").range()).isEmpty();
        assertThat(Requirement.parse(r.toString())).isEqualTo(r);
    }

    @Test
    void aVersionedRequirementIsMetOnlyByAVersionInItsRange() {
        assertThat(meets("plan-protocol>=3", "plan-protocol=3")).isTrue();
        assertThat(meets("plan-protocol>=3", "plan-protocol=3.1.4")).isTrue();
        assertThat(meets("plan-protocol>=3", "plan-protocol=2")).isFalse();
        assertThat(meets("plan-protocol>=3", "plan-protocol")).as("unversioned").isFalse();
        assertThat(meets("plan-protocol>=3")).as("absent").isFalse();
        assertThat(meets("datafusion^55", "datafusion=55.0.1")).isTrue();
        assertThat(meets("datafusion^55", "datafusion=56.0.0")).isFalse();
        assertThat(meets("datafusion=55.0.1", "datafusion=55.0.1")).isTrue();
        assertThat(meets("datafusion=55.0.1", "datafusion=55.0.2")).isFalse();
        assertThat(meets("datafusion 55.x || 57", "datafusion=57.1.0")).isTrue();
        assertThat(meets("datafusion 55.x || 57", "datafusion=56.0.0")).isFalse();
        assertThat(meets("datafusion=55.0.1", "datafusion=55.0.1+build.3")).as("build metadata ignored").isTrue();
    }

    @Test
    void anUnversionedRequirementIsMetByTheCapabilityWithAnyVersionOrNone() {
        assertThat(meets("udf:geo_distance", "udf:geo_distance")).isTrue();
        assertThat(meets("udf:geo_distance", "udf:geo_distance=2")).isTrue();
        assertThat(meets("udf:geo_distance", "udf:geo_distance_v2")).isFalse();
        assertThat(meets("udf:geo_distance")).isFalse();
    }

    @Test
    void preReleasesMatchAsNpmLetsThem() {
        // npm: a pre-release is in a range only when a comparator names one of the same major.minor.patch.
        assertThat(meets("datafusion^55", "datafusion=55.1.0-rc.1")).isFalse();
        assertThat(meets("datafusion>=55.1.0-rc.0", "datafusion=55.1.0-rc.1")).isTrue();
        assertThat(meets("datafusion>=55.1.0-rc.0", "datafusion=55.2.0-rc.1")).isFalse();
        assertThat(meets("datafusion>=55.1.0-rc.0", "datafusion=56.0.0")).isTrue();
        assertThat(meets("datafusion>=55.1.0-rc.2", "datafusion=55.1.0-rc.10")).as("numeric identifiers by value").isTrue();
    }

    @Test
    void whyNotMetNamesTheRequirementAndWhatTheWorkerHas() {
        Requirements r = Requirements.of("udf:geo_distance", "plan-protocol>=3");
        assertThat(r.whyNotMetBy(Capabilities.of("plan-protocol=3"))).contains("lacks udf:geo_distance");
        assertThat(r.whyNotMetBy(Capabilities.of("udf:geo_distance", "plan-protocol=2")))
                .contains("lacks plan-protocol>=3 (has plan-protocol=2)");
        assertThat(r.whyNotMetBy(Capabilities.of("udf:geo_distance", "plan-protocol")))
                .contains("lacks plan-protocol>=3 (has plan-protocol without a version)");
        assertThat(r.whyNotMetBy(Capabilities.of("udf:geo_distance", "plan-protocol=4"))).isEmpty();
        assertThat(Requirements.none().isMetBy(Capabilities.none())).isTrue();
    }

    @Test
    void requirementsAreReadFromAListAndAGivenTwiceCountsOnce() {
        Requirements r = Requirements.parse("udf:geo_distance, plan-protocol>=3,udf:geo_distance");
        assertThat(r.asList()).extracting(Requirement::toString).containsExactly("udf:geo_distance", "plan-protocol>=3");
        assertThat(Requirements.parse(r.toString())).isEqualTo(r);
        assertThat(Requirements.parse(" ")).isSameAs(Requirements.none());
        assertThat(Requirements.of()).isSameAs(Requirements.none());
        assertThat(r.and(Requirements.of("gpu", "udf:geo_distance")).toString())
                .isEqualTo("udf:geo_distance, plan-protocol>=3, gpu");
        // Two ranges of one name are both required: a worker's one version must be in each.
        Requirements both = Requirements.of("plan-protocol>=3", "plan-protocol<5");
        assertThat(both.isMetBy(Capabilities.of("plan-protocol=4"))).isTrue();
        assertThat(both.isMetBy(Capabilities.of("plan-protocol=5"))).isFalse();
    }

    @Test
    void aMalformedRangeIsRefusedNamingTheRequirementAndTheRange() {
        assertThatThrownBy(() -> Requirement.parse("udf:x>=banana")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("requirement 'udf:x>=banana': range '>=banana' is not an npm range: ");
        assertThatThrownBy(() -> Requirement.parse("a^^1"))
                .hasMessageStartingWith("requirement 'a^^1': range '^^1' is not an npm range: ");
        assertThatThrownBy(() -> Requirement.parse("a >2 <1"))
                .hasMessage("requirement 'a >2 <1': range '>2 <1' is not an npm range: '>2 <1' matches no version");
        assertThatThrownBy(() -> Requirement.parse("a 1 ||"))
                .hasMessage("requirement 'a 1 ||': range '1 ||' is not an npm range: an alternative next to '||' is empty");
        assertThatThrownBy(() -> Requirement.parse("a 1 || || 2"))
                .hasMessageEndingWith("an alternative next to '||' is empty");
        assertThatThrownBy(() -> Requirement.parse("a >=")).hasMessageContaining("'>=' has no version after it");
    }

    @Test
    void aMalformedNameIsRefusedNamingTheRequirement() {
        assertThatThrownBy(() -> Requirement.parse(">=3")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("requirement '>=3': the capability name is empty");
        assertThatThrownBy(() -> Requirement.parse("udf,x")).hasMessageStartingWith("requirement 'udf,x': the capability name 'udf,x' is not");
        assertThatThrownBy(() -> Requirement.parse("")).hasMessage("requirement '': the capability name is empty");
    }

    @Test
    void anEmptyItemInAListIsRefusedNamingItsPlace() {
        assertThatThrownBy(() -> Requirements.parse("udf:geo_distance, plan-protocol>=3,"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("requirements 'udf:geo_distance, plan-protocol>=3,': item 3 of 3 is empty");
        assertThatThrownBy(() -> Requirements.parse("a,,b")).hasMessage("requirements 'a,,b': item 2 of 3 is empty");
        assertThatThrownBy(() -> Capabilities.parse("udf:x, ")).hasMessage("capabilities 'udf:x, ': item 2 of 2 is empty");
    }

    @Test
    void tooLongAndControlCharactersAreRefusedWithAnEscapedBoundedMessage() {
        String long_ = "udf:" + "x".repeat(Requirement.MAX_CHARS);
        assertThatThrownBy(() -> Requirement.parse(long_)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is 260 characters long (at most 256)")
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(200));
        assertThatThrownBy(() -> Requirement.parse("udf:\u001b]0;owned\u0007"))
                .satisfies(e -> assertThat(PeerText.isClean(e.getMessage())).as(e.getMessage()).isTrue())
                .hasMessageContaining("udf:\\u001b]0;owned\\u0007");
        assertThatThrownBy(() -> Requirement.parse("p >=1\u0000"))
                .satisfies(e -> assertThat(PeerText.isClean(e.getMessage())).as(e.getMessage()).isTrue());
        assertThatThrownBy(() -> Requirement.parse("p\u202e>=1"))
                .satisfies(e -> assertThat(PeerText.isClean(e.getMessage())).as(e.getMessage()).isTrue());
    }

    @Test
    void moreThanTheMostRequirementsAreRefused() {
        List<String> many = new ArrayList<>();
        for (int i = 0; i <= Requirements.MAX_REQUIREMENTS; i++) {
            many.add("udf:f" + i);
        }
        assertThatThrownBy(() -> Requirements.of(many)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("33 requirements (at most 32)");
        assertThatThrownBy(() -> Requirements.parse(String.join(",", many))).hasMessage("33 requirements (at most 32)");
        Requirements most = Requirements.of(many.subList(0, 32));
        assertThatThrownBy(() -> most.and(Requirements.of("gpu"))).hasMessage("33 requirements (at most 32)");
        assertThat(most.and(Requirements.of("udf:f0"))).as("nothing new").isEqualTo(most);
    }
}
