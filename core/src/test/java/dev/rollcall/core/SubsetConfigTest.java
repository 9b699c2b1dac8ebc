package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code rollcall.subset.*} as configuration and through the builder: bad values name themselves and the key. */
class SubsetConfigTest {

    private static Map<String, String> base() {
        Map<String, String> m = new HashMap<>();
        m.put("rollcall.discovery.type", "nothing");
        m.put("rollcall.policy.type", "any");
        return m;
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "abc", "2.5"})
    void aSizeThatIsNoWholeNumberFromOneNamesTheValueAndTheKey(String size) {
        Map<String, String> m = base();
        m.put("rollcall.subset.size", size);
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(m)))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.subset.size='" + size + "'")
                .hasMessageContaining("a whole number from 1");
    }

    @Test
    void theBuilderRefusesASizeBelowOneAndABlankIdNamingThem() {
        assertThatThrownBy(() -> WorkerResolver.builder().subsetSize(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rollcall.subset.size='0' (WorkerResolver.Builder)");
        assertThatThrownBy(() -> WorkerResolver.builder().subsetSize(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rollcall.subset.size='-1'");
        assertThatThrownBy(() -> WorkerResolver.builder().coordinatorId(" "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rollcall.subset.coordinator-id=").hasMessageContaining("not blank");
    }

    @Test
    void subsetsWithExactDrainAreRefusedNamingBothKeys() {
        Map<String, String> m = base();
        m.put("rollcall.subset.size", "3");
        m.put("rollcall.drain.exact", "true");
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(m)))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.drain.exact='true'")
                .hasMessageContaining("rollcall.subset.size");
    }

    @Test
    void aCoordinatorIdWithoutASizeIsAKnownKeyAndSubsetsStayOff() throws Exception {
        Map<String, String> m = base();
        m.put("rollcall.subset.coordinator-id", "c1");
        try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(m))) {
            assertThat(resolver.pin().counts().outsideSubset()).isZero();
        }
    }

    @Test
    void aValidSizeAndIdBuild() throws Exception {
        Map<String, String> m = base();
        m.put("rollcall.subset.size", "16");
        m.put("rollcall.subset.coordinator-id", "coordinator-7");
        try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(m))) {
            assertThat(resolver.pin().counts().outsideSubset()).isZero();
        }
    }
}
