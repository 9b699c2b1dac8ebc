package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.internal.ConfigOrigins;
import dev.rollcall.api.internal.UnknownKeys;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A key's declaration is the one place its default and bounds live: reads and code checks follow it. */
class SettingKeyTest {

    private static final SettingKey<Duration> TIMEOUT = SettingKey.define("test", "rollcall.probe.timeout",
            SettingType.DURATION, "deadline of each probe").byDefault(Duration.ofSeconds(2)).above(Duration.ZERO);
    private static final SettingKey<Integer> CONCURRENCY = SettingKey.define("test", "rollcall.probe.concurrency",
            SettingType.WHOLE_NUMBER, "probes in flight").byDefault(64).atLeast(1).atMost(100_000);
    private static final SettingKey<String> RANGE = SettingKey.define("test", "rollcall.policy.semver.range",
            SettingType.TEXT, "an npm range").required();

    @Test
    void anUnsetKeyReadsItsDeclaredDefaultAndASetOneItsValue() {
        Settings none = Settings.of(Map.of());
        assertThat(none.get(TIMEOUT)).isEqualTo(Duration.ofSeconds(2));
        assertThat(none.find(TIMEOUT)).isEmpty();
        Settings set = Settings.of(Map.of("rollcall.probe.timeout", "250ms", "rollcall.probe.concurrency", "8"));
        assertThat(set.get(TIMEOUT)).isEqualTo(Duration.ofMillis(250));
        assertThat(set.scope("rollcall.probe.").get(CONCURRENCY)).as("a scoped view reads full keys").isEqualTo(8);
    }

    @Test
    void aValueOutsideTheDeclaredBoundsIsRefusedNamingKeyValueAndBounds() {
        assertThatThrownBy(() -> Settings.of(Map.of("rollcall.probe.concurrency", "0")).get(CONCURRENCY))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("rollcall.probe.concurrency='0': expected a whole number from 1 to 100000");
        assertThatThrownBy(() -> Settings.of(Map.of("rollcall.probe.timeout", "0s")).get(TIMEOUT))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("rollcall.probe.timeout='0s': expected a duration greater than 0s");
        assertThatThrownBy(() -> Settings.of(Map.of("rollcall.probe.concurrency", "many")).get(CONCURRENCY))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("rollcall.probe.concurrency='many': expected a whole number from 1 to 100000");
        assertThatThrownBy(() -> Settings.of(Map.of("rollcall.probe.timeout", "2 parsecs")).get(TIMEOUT))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageStartingWith("rollcall.probe.timeout='2 parsecs': expected a duration greater than 0s")
                .hasMessageContaining("250ms, 2s");
    }

    @Test
    void aRequiredKeyThatIsUnsetIsReportedMissingByName() {
        assertThatThrownBy(() -> Settings.of(Map.of()).get(RANGE))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageStartingWith("rollcall.policy.semver.range is not set");
    }

    @Test
    void aValueGivenInCodeIsCheckedAtOnceNamingTheKeyAndWhereItCameFrom() {
        assertThat(CONCURRENCY.check(5, "Builder")).isEqualTo(5);
        assertThatThrownBy(() -> CONCURRENCY.check(0, "WorkerResolver.Builder"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("rollcall.probe.concurrency='0' (WorkerResolver.Builder): expected a whole number from 1"
                        + " to 100000");
        assertThatThrownBy(() -> TIMEOUT.check(null, "WorkerResolver.Builder"))
                .isInstanceOf(NullPointerException.class).hasMessage("rollcall.probe.timeout");
    }

    @Test
    void controlCharactersInABadValueAreEscapedInTheMessage() {
        Throwable e = org.assertj.core.api.Assertions.catchThrowable(
                () -> Settings.of(Map.of("rollcall.probe.concurrency", "8\u001b[2J\nadmin=true")).get(CONCURRENCY));
        assertThat(e).isInstanceOf(ConfigurationException.class);
        assertThat(e.getMessage()).doesNotContain("\u001b").doesNotContain("\n").contains("rollcall.probe.concurrency");
    }

    @Test
    void aBadValuesErrorNamesTheSourceItCameFrom() {
        RollcallConfig config = RollcallConfig.of(Map.of()).with("rollcall.probe.timeout", "2 parsecs",
                "Spring property source 'Inlined Test Properties'");
        ConfigurationException e = ConfigOrigins.named((ConfigurationException) org.assertj.core.api.Assertions
                .catchThrowable(() -> config.settings().get(TIMEOUT)), config);
        assertThat(e.getMessage()).startsWith("rollcall.probe.timeout='2 parsecs'")
                .endsWith("(from Spring property source 'Inlined Test Properties')");
        assertThat(e.key()).isEqualTo("rollcall.probe.timeout");
    }

    @Test
    void anUndeclaredKeyBesideDeclaredOnesIsRefusedWithTheNearestBeforeAnythingIsRead() {
        RollcallConfig config = RollcallConfig.of(Map.of("rollcall.policy.type", "semver",
                "rollcall.policy.semver.rnage", "^1.4"));
        assertThatThrownBy(() -> UnknownKeys.checkDeclared(config, List.of(TIMEOUT, CONCURRENCY, RANGE), null,
                "semver"))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("unknown Rollcall configuration key: rollcall.policy.semver.rnage (programmatic): did you"
                        + " mean rollcall.policy.semver.range?");
        assertThat(config.wasRead("rollcall.policy.semver.range")).as("nothing read yet").isFalse();
    }

    @Test
    void keysOfAnInactivePolicyOrOfAModuleWithoutACatalogAreLeftToTheReadCheck() {
        RollcallConfig config = RollcallConfig.of(Map.of("rollcall.policy.semver.rnage", "^1.4",
                "rollcall.discovery.etcd.endpoints", "http://127.0.0.1:2379", "rollcall.keys.demo.v1.Orders.Place",
                "order.id"));
        UnknownKeys.checkDeclared(config, List.of(TIMEOUT, CONCURRENCY, RANGE), "etcd", "exact");
    }

    @Test
    void aMistypedSegmentUnderAnotherModulesPrefixIsRefusedThoughNoDeclaredKeyHasItsParent() {
        // rollcall.calls.*, rollcall.serve.* and rollcall.kubernetes.* are read outside the resolver, so
        // the read check leaves them alone: the declared check is the only one that can see this typo.
        SettingKey<Boolean> enabled = SettingKey.define("test", "rollcall.calls.outlier-detection.enabled",
                SettingType.BOOLEAN, "on").byDefault(true);
        RollcallConfig config = RollcallConfig.of(Map.of("rollcall.calls.outlier-detectoin.enabled", "false"));
        assertThatThrownBy(() -> UnknownKeys.checkDeclared(config, List.of(enabled), null, null))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.calls.outlier-detectoin.enabled")
                .hasMessageContaining("did you mean rollcall.calls.outlier-detection.enabled?");
    }
}
