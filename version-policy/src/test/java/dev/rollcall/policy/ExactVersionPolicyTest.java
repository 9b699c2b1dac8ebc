package dev.rollcall.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.policy.Verdict;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ExactVersionPolicyTest {

    @Test
    void acceptsTheOneConfiguredVersion() {
        assertThat(ExactVersionPolicy.of("1.4.0").check(Workers.reporting("1.4.0")).accepted()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"1.4.1", "v1.4.0", "1.4.0+linux", "1.4.0 ", "1.4", "1.4.0-rc.1"})
    void rejectsAnythingButTheSameString(String version) {
        Verdict verdict = ExactVersionPolicy.of("1.4.0").check(Workers.reporting(version));

        assertThat(verdict.accepted()).isFalse();
        assertThat(verdict.reason()).isEqualTo("version '" + version + "' is not 1.4.0");
    }

    @Test
    void acceptsEachOfSeveralVersions() {
        ExactVersionPolicy policy = ExactVersionPolicy.of("1.4.0", "1.4.1");

        assertThat(policy.check(Workers.reporting("1.4.0")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.4.1")).accepted()).isTrue();
        Verdict verdict = policy.check(Workers.reporting("2.0.0"));
        assertThat(verdict.accepted()).isFalse();
        assertThat(verdict.reason()).isEqualTo("version '2.0.0' is not one of [1.4.0, 1.4.1]");
    }

    @Test
    void rejectsWorkerThatReportsNoVersion() {
        Verdict verdict = ExactVersionPolicy.of("1.4.0", "1.4.1").check(Workers.reporting(""));

        assertThat(verdict.accepted()).isFalse();
        assertThat(verdict.reason()).isEqualTo("no version (the worker never set one) is not one of [1.4.0, 1.4.1]");
    }

    @Test
    void acceptsTheEmptyVersionWhenListedProgrammatically() {
        ExactVersionPolicy policy = ExactVersionPolicy.of("", "1.4.0");

        assertThat(policy.check(Workers.reporting("")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.4.0")).accepted()).isTrue();
        assertThat(policy.check(Workers.reporting("1.4.1")).reason())
                .isEqualTo("version '1.4.1' is not one of [(no version), 1.4.0]");
        assertThat(ExactVersionPolicy.of("").description()).isEqualTo("exact (no version)");
    }

    @Test
    void keepsConfiguredOrderAndDropsDuplicates() {
        ExactVersionPolicy policy = ExactVersionPolicy.of(List.of("1.4.1", "1.4.0", "1.4.1"));

        assertThat(policy.versions()).containsExactly("1.4.1", "1.4.0");
        assertThat(policy.description()).isEqualTo("exact one of [1.4.1, 1.4.0]");
    }

    @Test
    void describesTheAcceptedVersions() {
        assertThat(ExactVersionPolicy.of("1.4.0").description()).isEqualTo("exact 1.4.0");
        assertThat(ExactVersionPolicy.of("1.4.0", "1.4.1").toString()).isEqualTo("exact one of [1.4.0, 1.4.1]");
    }

    @Test
    void isUnaffectedByLaterChangesToTheGivenVersions() {
        String[] versions = {"1.4.0"};
        List<String> list = new ArrayList<>(List.of("1.4.0"));
        ExactVersionPolicy fromArray = ExactVersionPolicy.of(versions);
        ExactVersionPolicy fromList = ExactVersionPolicy.of(list);

        versions[0] = "2.0.0";
        list.set(0, "2.0.0");

        assertThat(fromArray.versions()).containsExactly("1.4.0");
        assertThat(fromList.versions()).containsExactly("1.4.0");
    }

    @Test
    void needsAtLeastOneVersion() {
        assertThatThrownBy(ExactVersionPolicy::of)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one version");
        assertThatThrownBy(() -> ExactVersionPolicy.of(List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ExactVersionPolicy.of("1.4.0", null))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void reasonCannotForgeALogLine() {
        Verdict verdict = ExactVersionPolicy.of("1.4.0").check(Workers.reporting("1.4.1\nERROR forged\u0007"));

        assertThat(verdict.reason()).isEqualTo("version '1.4.1\\nERROR forged\\u0007' is not 1.4.0");
    }

    @Test
    void reasonCutsAnAbsurdlyLongVersion() {
        Verdict verdict = ExactVersionPolicy.of("1.4.0").check(Workers.reporting("9".repeat(100_000)));

        assertThat(verdict.reason()).hasSizeLessThan(300).contains(" more)' is not 1.4.0");
    }
}
