package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.kubernetes.gate.internal.GateKeys;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code rollcall.kubernetes.readiness-gate} must be a condition type the API server accepts. */
class GateConfigurationTest {

    @ParameterizedTest
    @ValueSource(strings = {"rollcall.dev/compatible", "compatible", "example.com/Ready_1.x", "a/b"})
    void aKubernetesConditionTypeIsTaken(String gate) {
        assertThat(GateKeys.readinessGate(settings(gate).settings())).contains(gate);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rollcall.dev/compatible\n[main] INFO forged\u001b[31m", "Rollcall.dev/compatible",
            "rollcall.dev/", "/compatible", "a/b/c", "-compatible", "compatible-", "rollcall dev/compatible",
            "rollcall.dev/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})
    void anythingElseIsAConfigurationErrorNamingTheKeyAndTheEscapedValue(String gate) {
        RollcallConfig config = settings(gate);
        try (WorkerResolver resolver = WorkerResolver.builder().name("gate-config").discovery(nothing())
                .policy(w -> Verdict.accept()).build()) {
            assertThatThrownBy(() -> KubernetesGate.start(resolver, config))
                    .isInstanceOfSatisfying(ConfigurationException.class, e -> {
                        assertThat(e.key()).isEqualTo("rollcall.kubernetes.readiness-gate");
                        assertThat(e.getMessage()).startsWith("rollcall.kubernetes.readiness-gate='"
                                + PeerText.escape(gate, 1024) + "': expected a Kubernetes condition type");
                        assertThat(PeerText.isClean(e.getMessage())).isTrue();
                    });
        }
    }

    private static RollcallConfig settings(String gate) {
        return RollcallConfig.of(Map.of("rollcall.discovery.type", "k8s",
                "rollcall.kubernetes.readiness-gate", gate));
    }

    private static WorkerDiscovery nothing() {
        return new WorkerDiscovery() {
            @Override
            public void start(CandidateListener listener) {
                listener.onCandidates(Set.of());
            }

            @Override
            public void close() {
            }
        };
    }
}
