package dev.rollcall.api.labels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.labels.LabelSelector.Operator;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class LabelSelectorTest {

    private static final Map<String, String> PROD_FRONTEND = Map.of("environment", "production", "tier", "frontend");
    private static final Map<String, String> QA_BACKEND = Map.of("environment", "qa", "tier", "backend",
            "partition", "customerA");

    /** The examples of Kubernetes' "Labels and Selectors" page, with what they select among two objects. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "environment = production; true; false",
        "environment == production; true; false",
        "tier != frontend; false; true",
        "environment=production,tier!=frontend; false; false",
        "environment in (production, qa); true; true",
        "tier notin (frontend, backend); false; false",
        "partition; false; true",
        "!partition; true; false",
        "partition,environment notin (qa); false; false",
        "environment notin (production); false; true",
        "missing!=x; true; true",
    })
    void selectsAsKubernetesDoes(String text, boolean prodFrontend, boolean qaBackend) {
        LabelSelector s = LabelSelector.parse(text);
        assertThat(s.matches(PROD_FRONTEND)).as("%s on %s", text, PROD_FRONTEND).isEqualTo(prodFrontend);
        assertThat(s.matches(QA_BACKEND)).as("%s on %s", text, QA_BACKEND).isEqualTo(qaBackend);
    }

    @Test
    void readsEveryOperatorOfTheIssuesExample() {
        LabelSelector s = LabelSelector.parse("env=prod,tier!=canary,zone in (eu-1,eu-2),!deprecated");
        assertThat(s.requirements()).extracting(LabelSelector.Requirement::operator)
                .containsExactly(Operator.EQUALS, Operator.NOT_EQUALS, Operator.IN, Operator.DOES_NOT_EXIST);
        assertThat(s).hasToString("env=prod,tier!=canary,zone in (eu-1,eu-2),!deprecated");
        assertThat(LabelSelector.parse(s.toString())).isEqualTo(s);
    }

    @Test
    void aMismatchNamesTheRequirementAndTheLabel() {
        LabelSelector s = LabelSelector.parse("env=prod, zone in (eu-1,eu-2), !deprecated");
        assertThat(s.mismatch(Map.of("env", "staging"))).contains("label env='staging' does not match env=prod");
        assertThat(s.mismatch(Map.of())).contains("label env is missing, needed by env=prod");
        assertThat(s.mismatch(Map.of("env", "prod", "zone", "us-1")))
                .contains("label zone='us-1' does not match zone in (eu-1,eu-2)");
        assertThat(s.mismatch(Map.of("env", "prod", "zone", "eu-2", "deprecated", "yes")))
                .contains("label deprecated='yes' does not match !deprecated");
        assertThat(s.mismatch(Map.of("env", "prod", "zone", "eu-2"))).isEmpty();
    }

    @Test
    void aBlankSelectorSelectsEverything() {
        assertThat(LabelSelector.parse(" ").isEmpty()).isTrue();
        assertThat(LabelSelector.parse("").matches(QA_BACKEND)).isTrue();
    }

    @Test
    void keysWithAPrefixAndEmptyValuesAreValid() {
        assertThat(LabelSelector.parse("example.com/env=,app.kubernetes.io/name=rollcall")
                .matches(Map.of("example.com/env", "", "app.kubernetes.io/name", "rollcall"))).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "env=prod,; at 9: expected a label key, found the end",
        "env<prod; at 3: expected '=', '==', '!=', 'in', 'notin', ',' or the end, found '<'",
        "zone in eu-1; at 8: expected '(' and a list of values, found 'e'",
        "zone in (eu-1; at 13: expected ',' or ')', found the end",
        "zone in (); at 9: expected at least one value, found ')'",
        "-env=prod; at 0: expected a label key (an optional DNS-subdomain prefix and '/', then at most 63 of [A-Za-z0-9-_.], starting and ending alphanumeric), found '-env'",
        "env=-prod; at 4: expected a label value (empty, or at most 63 of [A-Za-z0-9-_.], starting and ending alphanumeric), found '-prod'",
        "Bad_Prefix/env=x; at 0: expected a label key (an optional DNS-subdomain prefix and '/', then at most 63 of [A-Za-z0-9-_.], starting and ending alphanumeric), found 'Bad_Prefix/env'",
        "env=prod extra; at 9: expected ',' or the end, found 'e'",
    })
    void malformedSelectorsNameThePositionAndWhatWasExpected(String text, String message) {
        assertThatThrownBy(() -> LabelSelector.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage(message);
    }

    @Test
    void labelRulesAreKubernetes() {
        assertThat(LabelSelector.validKey("a".repeat(63))).isTrue();
        assertThat(LabelSelector.validKey("a".repeat(64))).isFalse();
        assertThat(LabelSelector.validKey("x/" + "a".repeat(63))).isTrue();
        assertThat(LabelSelector.validKey("/a")).isFalse();
        assertThat(LabelSelector.validValue("")).isTrue();
        assertThat(LabelSelector.validValue("a.b_c-d")).isTrue();
        assertThat(LabelSelector.validValue("a b")).isFalse();
        assertThat(LabelSelector.validValue("a".repeat(64))).isFalse();
    }
}
