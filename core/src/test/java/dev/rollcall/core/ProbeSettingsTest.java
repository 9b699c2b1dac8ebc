package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProbeSettingsTest {

    private static Settings probe(Map<String, String> keys) {
        return RollcallConfig.of(keys).settings().scope("rollcall.probe.");
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        ProbeSettings s = ProbeSettings.read(probe(Map.of()), WorkerResolver.builder());
        assertThat(s.timeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.concurrency()).isEqualTo(64);
        assertThat(s.backoffInitial()).isEqualTo(Duration.ofMillis(250));
        assertThat(s.backoffMax()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.refreshInterval()).isEqualTo(Duration.ofMinutes(10));
        assertThat(s.keepChannels()).isTrue();
        assertThat(s.maxResponseBytes()).isEqualTo(1 << 20);
    }

    @Test
    void builderValuesWinOverConfiguredOnes() {
        ProbeSettings s = ProbeSettings.read(probe(Map.of("rollcall.probe.timeout", "9s",
                "rollcall.probe.concurrency", "3")), WorkerResolver.builder().probeTimeout(Duration.ofMillis(700)));
        assertThat(s.timeout()).isEqualTo(Duration.ofMillis(700));
        assertThat(s.concurrency()).isEqualTo(3);
    }

    @Test
    void backoffSetInCodeWithMaxBelowInitialFailsAtOnceNamingTheArguments() {
        assertThatThrownBy(() -> WorkerResolver.builder().backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("backoff max PT1S is below backoff initial PT2S");
    }

    @Test
    void configuredBackoffWithMaxBelowInitialNamesTheKeys() {
        assertThatThrownBy(() -> ProbeSettings.read(probe(Map.of("rollcall.probe.backoff.initial", "2s",
                "rollcall.probe.backoff.max", "1s")), WorkerResolver.builder()))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.backoff.max").hasMessageContaining("rollcall.probe.backoff.initial");
    }

    @Test
    void backoffSetInCodeIsNotCheckedAgainstConfiguredKeysNobodySet() {
        ProbeSettings s = ProbeSettings.read(probe(Map.of()),
                WorkerResolver.builder().backoff(Duration.ofMinutes(1), Duration.ofMinutes(2)));
        assertThat(s.backoffInitial()).isEqualTo(Duration.ofMinutes(1));
        assertThat(s.backoffMax()).isEqualTo(Duration.ofMinutes(2));
    }
}
