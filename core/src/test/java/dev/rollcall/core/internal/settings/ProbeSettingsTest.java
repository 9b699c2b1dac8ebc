package dev.rollcall.core.internal.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.Settings;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.core.internal.catalog.CoreKeys;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;


class ProbeSettingsTest {

    private static Settings probe(Map<String, String> keys) {
        return RollcallConfig.of(keys).settings().scope("rollcall.probe.");
    }

    private static Settings probe(Map<String, String> keys, BuilderValues given) {
        return given.over(RollcallConfig.of(keys)).settings().scope("rollcall.probe.");
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        ProbeSettings s = ProbeSettings.read(probe(Map.of()));
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
                "rollcall.probe.concurrency", "3"), given(CoreKeys.PROBE_TIMEOUT, Duration.ofMillis(700))));
        assertThat(s.timeout()).isEqualTo(Duration.ofMillis(700));
        assertThat(s.concurrency()).isEqualTo(3);
    }

    @Test
    void backoffSetInCodeWithMaxBelowInitialFailsAtOnceNamingTheArguments() {
        assertThatThrownBy(() -> WorkerResolver.builder().backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("rollcall.probe.backoff.max='1s' (WorkerResolver.Builder): expected at least"
                        + " rollcall.probe.backoff.initial (2s)");
    }

    @Test
    void configuredBackoffWithMaxBelowInitialNamesTheKeys() {
        assertThatThrownBy(() -> ProbeSettings.read(probe(Map.of("rollcall.probe.backoff.initial", "2s",
                "rollcall.probe.backoff.max", "1s"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.backoff.max").hasMessageContaining("rollcall.probe.backoff.initial");
    }

    @Test
    void backoffSetInCodeIsNotCheckedAgainstConfiguredKeysNobodySet() {
        BuilderValues given = given(CoreKeys.BACKOFF_INITIAL, Duration.ofMinutes(1));
        given.put(CoreKeys.BACKOFF_MAX, Duration.ofMinutes(2));
        ProbeSettings s = ProbeSettings.read(probe(Map.of(), given));
        assertThat(s.backoffInitial()).isEqualTo(Duration.ofMinutes(1));
        assertThat(s.backoffMax()).isEqualTo(Duration.ofMinutes(2));
    }

    @Test
    void keepaliveDefaultsAreFiveSecondsAndThreeAndHttp2PingsEveryTenAtLeast() {
        ProbeSettings s = ProbeSettings.read(probe(Map.of()));
        assertThat(s.keepaliveTime()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.keepaliveTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(s.http2KeepaliveTime()).as("grpc-java's floor").isEqualTo(Duration.ofSeconds(10));
        assertThat(s.silenceLimitNanos(5_000)).isEqualTo(Duration.ofSeconds(8).toNanos());
        assertThat(s.silenceLimitNanos(1_000)).as("keepalive-time when the grant is shorter")
                .isEqualTo(Duration.ofSeconds(8).toNanos());
        assertThat(s.silenceLimitNanos(60_000)).as("the grant when it is longer")
                .isEqualTo(Duration.ofSeconds(63).toNanos());
        assertThat(s.sweepNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());

        ProbeSettings slow = ProbeSettings.read(probe(Map.of("rollcall.probe.keepalive-time", "30s",
                "rollcall.probe.keepalive-timeout", "150ms")));
        assertThat(slow.http2KeepaliveTime()).isEqualTo(Duration.ofSeconds(30));
        assertThat(slow.keepaliveTimeout()).isEqualTo(Duration.ofMillis(150));
        assertThat(slow.sweepNanos()).as("a third of the timeout, 100 ms at least").isEqualTo(Duration.ofMillis(100).toNanos());
    }

    @Test
    void keepaliveSetInCodeWinsAndIsCheckedAtOnce() {
        BuilderValues given = given(CoreKeys.KEEPALIVE_TIME, Duration.ofSeconds(2));
        given.put(CoreKeys.KEEPALIVE_TIMEOUT, Duration.ofSeconds(1));
        ProbeSettings s = ProbeSettings.read(probe(Map.of("rollcall.probe.keepalive-time", "30s"), given));
        assertThat(s.keepaliveTime()).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.keepaliveTimeout()).isEqualTo(Duration.ofSeconds(1));

        assertThatThrownBy(() -> WorkerResolver.builder().keepalive(Duration.ofMillis(500), Duration.ofSeconds(3)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("rollcall.probe.keepalive-time='500ms' (WorkerResolver.Builder): expected a duration of at least 1s");
        assertThatThrownBy(() -> WorkerResolver.builder().keepalive(Duration.ofSeconds(5), Duration.ofMillis(10)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("rollcall.probe.keepalive-timeout='10ms' (WorkerResolver.Builder): expected a duration of at"
                        + " least 100ms");
    }

    @Test
    void aConfiguredKeepaliveOutOfRangeNamesTheKeyAndTheValue() {
        assertThatThrownBy(() -> ProbeSettings.read(probe(Map.of("rollcall.probe.keepalive-time", "500ms"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("rollcall.probe.keepalive-time='500ms': expected a duration of at least 1s");
        assertThatThrownBy(() -> ProbeSettings.read(probe(Map.of("rollcall.probe.keepalive-timeout", "0s"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("rollcall.probe.keepalive-timeout='0s': expected a duration of at least 100ms");
        assertThatThrownBy(() -> ProbeSettings.read(probe(Map.of("rollcall.probe.keepalive-time", "soon"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.keepalive-time='soon'");
    }

    private static <T> BuilderValues given(SettingKey<T> key, T value) {
        BuilderValues given = new BuilderValues();
        given.put(key, value);
        return given;
    }
}
