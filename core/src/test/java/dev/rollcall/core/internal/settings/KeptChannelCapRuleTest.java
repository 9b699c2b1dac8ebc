package dev.rollcall.core.internal.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.management.UnixOperatingSystemMXBean;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.core.internal.catalog.CoreKeys;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import java.util.Set;
import java.lang.management.ManagementFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code rollcall.probe.max-kept-channels}: its default's rule, and the values refused with its key. */
class KeptChannelCapRuleTest {

    private static Settings probe(Map<String, String> keys) {
        return RollcallConfig.of(keys).settings().scope("rollcall.probe.");
    }

    @Test
    void theDefaultIsHalfTheDescriptorLimitLess256BetweenSixtyFourAndTenThousand() {
        assertThat(KeptChannelCap.forDescriptorLimit(1_024)).as("a shell's usual soft limit").isEqualTo(256);
        assertThat(KeptChannelCap.forDescriptorLimit(4_096)).isEqualTo(1_792);
        assertThat(KeptChannelCap.forDescriptorLimit(20_000)).isEqualTo(9_744);
        assertThat(KeptChannelCap.forDescriptorLimit(20_512)).as("the ceiling reached").isEqualTo(10_000);
        assertThat(KeptChannelCap.forDescriptorLimit(1_048_576)).as("most containers: the ceiling").isEqualTo(10_000);
        assertThat(KeptChannelCap.forDescriptorLimit(640)).as("the floor").isEqualTo(64);
        assertThat(KeptChannelCap.forDescriptorLimit(256)).as("the floor, not a negative").isEqualTo(64);
    }

    @Test
    void theDefaultIsDerivedFromThisProcesssDescriptorLimit() {
        long limit = ((UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getMaxFileDescriptorCount(); // the build runs on Linux
        assertThat(KeptChannelCap.derived()).isEqualTo(KeptChannelCap.forDescriptorLimit(limit));
        assertThat(ProbeSettings.read(probe(Map.of())).maxKeptChannels())
                .isEqualTo(KeptChannelCap.forDescriptorLimit(limit));
    }

    @Test
    void aConfiguredOrGivenCapWins() {
        assertThat(ProbeSettings.read(probe(Map.of("rollcall.probe.max-kept-channels", "3")))
                .maxKeptChannels()).isEqualTo(3);
        BuilderValues given = new BuilderValues();
        given.put(CoreKeys.MAX_KEPT_CHANNELS, 5);
        assertThat(ProbeSettings.read(given.over(RollcallConfig.of(Map.of("rollcall.probe.max-kept-channels", "3")))
                .settings().scope("rollcall.probe.")).maxKeptChannels()).isEqualTo(5);
    }

    @Test
    void zeroWhileChannelsAreKeptIsRefusedNamingTheKeyAndTheWayToKeepNone() {
        assertThatThrownBy(() -> ProbeSettings.read(probe(Map.of("rollcall.probe.max-kept-channels", "0"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageStartingWith("rollcall.probe.max-kept-channels='0': expected a whole number from 1 to")
                .hasMessageContaining("rollcall.probe.keep-channels=false");
        WorkerDiscovery none = new WorkerDiscovery() {
            @Override
            public void start(CandidateListener listener) {
                listener.onCandidates(Set.of());
            }

            @Override
            public void close() {
            }
        };
        assertThatThrownBy(() -> WorkerResolver.builder().discovery(none).policy(w -> Verdict.accept())
                .maxKeptChannels(0).build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.max-kept-channels='0'");
    }

    @Test
    void zeroWithoutKeptChannelsIsAccepted() {
        ProbeSettings s = ProbeSettings.read(probe(Map.of("rollcall.probe.max-kept-channels", "0",
                "rollcall.probe.keep-channels", "false")));
        assertThat(s.keepChannels()).isFalse();
        assertThat(s.maxKeptChannels()).isZero();
    }

    @Test
    void aNegativeOrMalformedCapIsRefusedNamingTheKeyOrTheArgument() {
        assertThatThrownBy(() -> ProbeSettings.read(probe(Map.of("rollcall.probe.max-kept-channels", "-1"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("rollcall.probe.max-kept-channels='-1': expected a whole number from 0 to 10000000");
        assertThatThrownBy(() -> ProbeSettings.read(probe(Map.of("rollcall.probe.max-kept-channels", "many"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.max-kept-channels='many'");
        assertThatThrownBy(() -> WorkerResolver.builder().maxKeptChannels(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("rollcall.probe.max-kept-channels='-1' (WorkerResolver.Builder): expected a whole number"
                        + " from 0 to 10000000");
    }
}
