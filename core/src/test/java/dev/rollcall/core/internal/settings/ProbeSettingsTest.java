package dev.rollcall.core.internal.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.core.WorkerResolver;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;


class ProbeSettingsTest {

    private static Settings probe(Map<String, String> keys) {
        return RollcallConfig.of(keys).settings().scope("rollcall.probe.");
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        ProbeSettings s = ProbeSettings.read(probe(Map.of()), ResolverOverrides.NONE);
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
                "rollcall.probe.concurrency", "3")), new ResolverOverrides.Draft().probeTimeout(Duration.ofMillis(700)).done());
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
                "rollcall.probe.backoff.max", "1s")), ResolverOverrides.NONE))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.backoff.max").hasMessageContaining("rollcall.probe.backoff.initial");
    }

    @Test
    void backoffSetInCodeIsNotCheckedAgainstConfiguredKeysNobodySet() {
        ProbeSettings s = ProbeSettings.read(probe(Map.of()),
                new ResolverOverrides.Draft().backoff(Duration.ofMinutes(1), Duration.ofMinutes(2)).done());
        assertThat(s.backoffInitial()).isEqualTo(Duration.ofMinutes(1));
        assertThat(s.backoffMax()).isEqualTo(Duration.ofMinutes(2));
    }

    @Test
    void keepaliveDefaultsAreFiveSecondsAndThreeAndHttp2PingsEveryTenAtLeast() {
        ProbeSettings s = ProbeSettings.read(probe(Map.of()), ResolverOverrides.NONE);
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
                "rollcall.probe.keepalive-timeout", "150ms")), ResolverOverrides.NONE);
        assertThat(slow.http2KeepaliveTime()).isEqualTo(Duration.ofSeconds(30));
        assertThat(slow.keepaliveTimeout()).isEqualTo(Duration.ofMillis(150));
        assertThat(slow.sweepNanos()).as("a third of the timeout, 100 ms at least").isEqualTo(Duration.ofMillis(100).toNanos());
    }

    @Test
    void keepaliveSetInCodeWinsAndIsCheckedAtOnce() {
        ProbeSettings s = ProbeSettings.read(probe(Map.of("rollcall.probe.keepalive-time", "30s")),
                new ResolverOverrides.Draft().keepalive(Duration.ofSeconds(2), Duration.ofSeconds(1)).done());
        assertThat(s.keepaliveTime()).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.keepaliveTimeout()).isEqualTo(Duration.ofSeconds(1));

        assertThatThrownBy(() -> WorkerResolver.builder().keepalive(Duration.ofMillis(500), Duration.ofSeconds(3)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("keepalive time PT0.5S is below 1 s (workers grant heartbeats of 1 s at least)");
        assertThatThrownBy(() -> WorkerResolver.builder().keepalive(Duration.ofSeconds(5), Duration.ofMillis(10)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("keepalive timeout PT0.01S is below 100 ms");
    }

    @Test
    void aConfiguredKeepaliveOutOfRangeNamesTheKeyAndTheValue() {
        assertThatThrownBy(() -> ProbeSettings.read(probe(Map.of("rollcall.probe.keepalive-time", "500ms")),
                ResolverOverrides.NONE))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("rollcall.probe.keepalive-time='500ms': expected a duration of 1s or more");
        assertThatThrownBy(() -> ProbeSettings.read(probe(Map.of("rollcall.probe.keepalive-timeout", "0s")),
                ResolverOverrides.NONE))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("rollcall.probe.keepalive-timeout='0s': expected a duration of 100ms or more");
        assertThatThrownBy(() -> ProbeSettings.read(probe(Map.of("rollcall.probe.keepalive-time", "soon")),
                ResolverOverrides.NONE))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.keepalive-time='soon'");
    }
}

