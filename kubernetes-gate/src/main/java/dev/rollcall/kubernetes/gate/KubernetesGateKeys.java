package dev.rollcall.kubernetes.gate;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.kubernetes.gate.internal.GateKeys;
import java.time.Duration;
import java.util.List;

/**
 * Every {@code rollcall.kubernetes.*} key of the readiness gate: {@link KubernetesGate}, {@code rollcall
 * serve} and docs/configuration.md's table take names, defaults and bounds from these constants, each
 * defined once inside the module. Found by {@link java.util.ServiceLoader}. Stateless.
 */
public final class KubernetesGateKeys implements KeyCatalog {

    public static final SettingKey<String> READINESS_GATE = GateKeys.READINESS_GATE;
    public static final SettingKey<Boolean> POD_DELETION_COST = GateKeys.POD_DELETION_COST;
    public static final SettingKey<Integer> WRITES_PER_SECOND = GateKeys.WRITES_PER_SECOND;
    public static final SettingKey<String> LEASE_NAME = GateKeys.LEASE_NAME;
    public static final SettingKey<Duration> LEASE_DURATION = GateKeys.LEASE_DURATION;
    public static final SettingKey<Duration> LEASE_RENEW_DEADLINE = GateKeys.LEASE_RENEW_DEADLINE;
    public static final SettingKey<Duration> LEASE_RETRY_PERIOD = GateKeys.LEASE_RETRY_PERIOD;
    public static final SettingKey<String> IDENTITY = GateKeys.IDENTITY;

    @Override
    public List<SettingKey<?>> keys() {
        return GateKeys.ALL;
    }
}
