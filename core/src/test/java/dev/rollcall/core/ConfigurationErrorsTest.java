package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every configuration error names the key, the value and the source it came from, and a misspelt
 * key is reported before the key it misses is reported missing.
 */
class ConfigurationErrorsTest {

    private static Map<String, String> base() {
        Map<String, String> m = new HashMap<>();
        m.put("rollcall.discovery.type", "nothing");
        m.put("rollcall.policy.type", "any");
        return m;
    }

    @Test
    void aMisspeltRequiredKeyIsReportedAsUnknownNotAsTheKeyItMisses() {
        Map<String, String> m = base();
        m.remove("rollcall.discovery.type");
        m.put("rollcall.discovery.typ", "nothing");
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(m)).close())
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("unknown Rollcall configuration key: rollcall.discovery.typ (programmatic): did you mean"
                        + " rollcall.discovery.type?");
    }

    @Test
    void aBadValueInAFileNamesTheFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rollcall.properties");
        Files.writeString(file, "rollcall.discovery.type=nothing\nrollcall.policy.type=any\n"
                + "rollcall.probe.timeout=2 parsecs\n");
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.fromFile(file)).close())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageStartingWith("rollcall.probe.timeout='2 parsecs': expected a duration greater than 0s")
                .hasMessageEndingWith("(from " + file + ")");
    }

    @Test
    void aConflictBetweenValuesGivenInCodeNamesTheBuilderAsTheirSource() {
        assertThatThrownBy(() -> WorkerResolver.builder().config(RollcallConfig.of(base())).exactDrain(true)
                .keepProbeChannels(false).build().close())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageStartingWith("rollcall.drain.exact='true': expected false while rollcall.probe.keep-channels"
                        + " is false")
                .hasMessageEndingWith("(from WorkerResolver.Builder)");
    }

    @Test
    void aValueGivenInCodeWinsOverTheConfigurationsAndIsCheckedByTheKeysBounds() throws Exception {
        Map<String, String> m = base();
        m.put("rollcall.probe.timeout", "2 parsecs");
        // The builder's value is the top layer: the bad configured one is never read.
        try (WorkerResolver resolver = WorkerResolver.builder().config(RollcallConfig.of(m))
                .probeTimeout(java.time.Duration.ofMillis(700)).build()) {
            assertThat(resolver.awaitVersion(1, java.time.Duration.ofSeconds(5)).number()).isEqualTo(1);
        }
        assertThatThrownBy(() -> WorkerResolver.builder().probeTimeout(java.time.Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("rollcall.probe.timeout='0s' (WorkerResolver.Builder): expected a duration greater than 0s");
    }
}
