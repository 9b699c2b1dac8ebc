package dev.rollcall.core.protocols;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerProbe;
import dev.rollcall.core.WorkerResolver;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code rollcall.probe.protocol}: found by name, and a name nobody provides is an error that says what there is. */
class ProbeProtocolChoiceTest {

    @Test
    void anUnknownProtocolNamesTheValueAndTheKeyAndListsTheKnownOnes() {
        RollcallConfig config = RollcallConfig.of(Map.of("rollcall.probe.protocol", "grpc-helth"));
        assertThatThrownBy(() -> WorkerResolver.builder().config(config).discovery(new HandedDiscovery())
                .policy(w -> Verdict.accept()).build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.protocol='grpc-helth'")
                .hasMessageContaining("did you mean 'grpc-health'?")
                .hasMessageContaining("known: datafusion-distributed, grpc-health, none, rollcall")
                .extracting(e -> ((ConfigurationException) e).key()).isEqualTo("rollcall.probe.protocol");
    }

    @Test
    void theBuilderNamesAProtocolAsTheKeyDoes() {
        assertThatThrownBy(() -> WorkerResolver.builder().probeProtocol("trino").discovery(new HandedDiscovery())
                .policy(w -> Verdict.accept()).build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.protocol='trino'")
                .hasMessageContaining("known: datafusion-distributed, grpc-health, none, rollcall");
        assertThatThrownBy(() -> WorkerResolver.builder().probeProtocol(" "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rollcall.probe.protocol=' ' (WorkerResolver.Builder)");
    }

    @Test
    void aOneOffProbeRefusesAnUnknownProtocolToo() {
        assertThatThrownBy(() -> WorkerProbe.builder().protocol("nope").build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.protocol='nope'");
    }

    @Test
    void aProtocolsOwnKeysAreReadAndChecked() {
        RollcallConfig bad = RollcallConfig.of(Map.of("rollcall.probe.protocol", "grpc-health",
                "rollcall.probe.grpc-health.service", "has space"));
        assertThatThrownBy(() -> WorkerResolver.builder().config(bad).discovery(new HandedDiscovery())
                .policy(w -> Verdict.accept()).build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.grpc-health.service='has space'");

        RollcallConfig good = RollcallConfig.of(Map.of("rollcall.probe.protocol", "grpc-health",
                "rollcall.probe.grpc-health.service", "demo.v1.Orders"));
        // Read, so not reported as an unknown key.
        WorkerResolver.builder().config(good).discovery(new HandedDiscovery()).policy(w -> Verdict.accept())
                .build().close();
    }

    @Test
    void keysOfAProtocolThatIsNotSelectedAreIgnoredButATypoIsStillAnError() {
        // One file may keep the settings of several protocols, as of several backends.
        RollcallConfig other = RollcallConfig.of(Map.of("rollcall.probe.grpc-health.service", "demo.v1.Orders"));
        WorkerResolver.builder().config(other).discovery(new HandedDiscovery()).policy(w -> Verdict.accept())
                .build().close();

        RollcallConfig typo = RollcallConfig.of(Map.of("rollcall.probe.protocl", "none"));
        assertThatThrownBy(() -> WorkerResolver.builder().config(typo).discovery(new HandedDiscovery())
                .policy(w -> Verdict.accept()).build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.protocl").hasMessageContaining("did you mean rollcall.probe.protocol?");
    }
}
