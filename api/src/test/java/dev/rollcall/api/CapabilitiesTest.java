package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a worker says it can do comes from the worker (its builder, the {@code rollcall.capabilities}
 * discovery label, the wire): it is read as written or refused with a message that names the bad
 * item, escaped and bounded.
 */
class CapabilitiesTest {

    @Test
    void aCapabilityIsANameWithAnOptionalVersion() {
        assertThat(Capability.parse("udf:geo_distance")).isEqualTo(Capability.of("udf:geo_distance"));
        assertThat(Capability.parse(" datafusion = 55.0.1 ")).isEqualTo(new Capability("datafusion", "55.0.1"));
        assertThat(Capability.parse("plan-protocol=3").versioned()).isTrue();
        assertThat(Capability.parse("datafusion=55.0.1-rc.1+build.7").toString()).isEqualTo("datafusion=55.0.1-rc.1+build.7");
        assertThat(Capability.parse("org.example/udf:h3_cell-v2").name()).isEqualTo("org.example/udf:h3_cell-v2");
    }

    @Test
    void capabilitiesAreKeptInNameOrderAndReadBackFromTheirText() {
        Capabilities c = Capabilities.parse("udf:geo_distance, datafusion=55.0.1,plan-protocol=3");
        assertThat(c.asList()).extracting(Capability::name).containsExactly("datafusion", "plan-protocol", "udf:geo_distance");
        assertThat(Capabilities.parse(c.toString())).isEqualTo(c);
        assertThat(c.has("udf:geo_distance")).isTrue();
        assertThat(c.has("udf:geo")).isFalse();
        assertThat(c.get("datafusion")).contains(new Capability("datafusion", "55.0.1"));
        assertThat(Capabilities.parse("  ")).isSameAs(Capabilities.none());
        assertThat(Capabilities.of()).isSameAs(Capabilities.none());
    }

    @Test
    void aMalformedNameIsRefusedNamingIt() {
        assertThatThrownBy(() -> Capability.parse("udf geo")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capability name 'udf geo' is not letters, digits and . _ : / - (starting with a letter or digit)");
        assertThatThrownBy(() -> Capability.parse("-udf")).hasMessageContaining("'-udf'");
        assertThatThrownBy(() -> Capability.parse("")).hasMessage("capability name is empty");
        assertThatThrownBy(() -> Capability.parse("=3")).hasMessage("capability name is empty");
        assertThatThrownBy(() -> Capability.parse("a,b")).hasMessageContaining("'a,b'");
    }

    @Test
    void aMalformedVersionIsRefusedNamingTheCapabilityAndTheVersion() {
        assertThatThrownBy(() -> Capability.parse("plan-protocol=three")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capability 'plan-protocol': version 'three' is not a version (1, 1.2 or 1.2.3, then an"
                        + " optional -pre.release and +build)");
        assertThatThrownBy(() -> Capability.parse("p=03")).hasMessageContaining("version '03' is not a version");
        assertThatThrownBy(() -> Capability.parse("p=1.2.3.4")).hasMessageContaining("version '1.2.3.4'");
        assertThatThrownBy(() -> Capability.parse("p=>=3")).hasMessageContaining("version '>=3'");
    }

    @Test
    void aPreReleaseNumberTooLargeToCompareIsRefusedRatherThanFailingAMatchLater() {
        // Found by RequirementFuzzTest: matching p>=1.0.0-1 against it threw NumberFormatException.
        assertThatThrownBy(() -> Capability.parse("p=1.0.0-99999999999999999999"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capability 'p': version '1.0.0-99999999999999999999' has a pre-release number larger than "
                        + Long.MAX_VALUE);
        assertThatThrownBy(() -> Capability.parse("p=1.0.0-rc99999999999999999999"))
                .hasMessageContaining("has a pre-release number larger than");
        assertThat(Capability.parse("p=1.0.0-9223372036854775807+99999999999999999999").version())
                .as("the largest number, and build metadata, which is never compared")
                .isEqualTo("1.0.0-9223372036854775807+99999999999999999999");
        assertThat(Capability.parse("p=1.0.0+build-99999999999999999999").versioned()).isTrue();
    }

    @Test
    void tooLongNamesAndVersionsAreRefusedWithABoundedMessage() {
        String name = "u".repeat(Capability.MAX_NAME_CHARS + 1);
        assertThatThrownBy(() -> Capability.of(name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is 129 characters long (at most 128)")
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(200).contains("...(89 more)"));
        assertThat(Capability.of("u".repeat(Capability.MAX_NAME_CHARS)).name()).hasSize(128);
        String version = "1.0.0-" + "a".repeat(Capability.MAX_VERSION_CHARS);
        assertThatThrownBy(() -> new Capability("p", version))
                .hasMessageContaining("capability 'p': version '")
                .hasMessageContaining("is 70 characters long (at most 64)");
    }

    @Test
    void controlCharactersAreEscapedInTheMessage() {
        assertThatThrownBy(() -> Capability.parse("udf:\u001b[31mred\nline")).isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> {
                    assertThat(PeerText.isClean(e.getMessage())).as(e.getMessage()).isTrue();
                    assertThat(e.getMessage()).contains("udf:\\u001b[31mred\\nline");
                });
        assertThatThrownBy(() -> Capability.parse("p=1\u0000"))
                .satisfies(e -> assertThat(PeerText.isClean(e.getMessage())).isTrue())
                .hasMessageContaining("version '1\\u0000'");
    }

    @Test
    void twoCapabilitiesOfOneNameAreRefusedNamingBoth() {
        assertThatThrownBy(() -> Capabilities.of("datafusion=55.0.1", "udf:x", "datafusion=56.0.0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capability 'datafusion' is given twice ('datafusion=55.0.1' and 'datafusion=56.0.0')");
        assertThatThrownBy(() -> Capabilities.parse("udf:x, udf:x")).hasMessageContaining("'udf:x' is given twice");
    }

    @Test
    void moreThanTheMostCapabilitiesAreRefusedAndAsManyAreKept() {
        List<String> many = new ArrayList<>();
        for (int i = 0; i <= Capabilities.MAX_CAPABILITIES; i++) {
            many.add("udf:f" + i);
        }
        assertThatThrownBy(() -> Capabilities.of(many.toArray(new String[0]))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("129 capabilities (at most 128)");
        assertThatThrownBy(() -> Capabilities.parse(String.join(",", many))).hasMessage("129 capabilities (at most 128)");
        assertThat(Capabilities.of(many.subList(0, 128).toArray(new String[0])).size()).isEqualTo(128);
    }
}
