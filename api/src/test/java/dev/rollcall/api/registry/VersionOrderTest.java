package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class VersionOrderTest {

    @Test
    void ordersVersionsAsSemanticVersioningDoes() {
        List<String> expected = List.of("0.9.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.2",
                "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.2.0", "1.10.0", "v1.10.1", "2.0.0");
        List<String> shuffled = new ArrayList<>(expected);
        Collections.shuffle(shuffled, new java.util.Random(7));
        shuffled.sort(VersionOrder.INSTANCE);
        assertThat(shuffled).containsExactlyElementsOf(expected);
    }

    @Test
    void ordersEveryStringTotallyEvenWhenItIsNotSemver() {
        assertThat(VersionOrder.INSTANCE.compare("", "1.0.0")).isNegative();
        assertThat(VersionOrder.INSTANCE.compare("nightly", "nightly")).isZero();
        assertThat(VersionOrder.INSTANCE.compare("1.0.0+b1", "1.0.0+b2")).isNegative();
        assertThat(VersionOrder.INSTANCE.compare("2024.10", "2024.9")).isPositive();
    }

    /** Each pins one rule where plain string order would answer the other way. */
    @Test
    void edgeCasesFollowTheRulesNotStringOrder() {
        VersionOrder o = VersionOrder.INSTANCE;
        assertThat(o.compare("1.0.0", "v1.0")).as("more parts is newer").isPositive();
        assertThat(o.compare("v1.0", "1.0.0")).as("fewer parts is older").isNegative();
        assertThat(o.compare(".9", "0.1")).as("an empty part comes first").isNegative();
        assertThat(o.compare("1.0.0-b.1", "1.0.0-a.2")).as("words compare as words").isPositive();
        assertThat(o.compare("-10", "-9")).as("pre-release numbers compare as numbers").isPositive();
        assertThat(o.compare("1.0.0-9.z", "1.0.0-a.a")).as("numbers before words").isNegative();
        assertThat(o.compare("-1", "")).as("a pre-release of nothing is older than nothing").isNegative();
        assertThat(o.compare("", "-1")).isPositive();
        assertThat(o.compare("+build", "0")).as("build metadata alone is an unset version").isNegative();
    }
}
