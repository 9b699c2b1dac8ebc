package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.core.WorkersUnavailableException;
import dev.rollcall.local.WorkerFleet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a new user's first program waits for, and what it is told when that does not come. */
class SettledFleetTest {

    @TempDir
    Path dir;

    private static RollcallConfig config(String... keys) {
        Map<String, String> m = new java.util.HashMap<>();
        for (int i = 0; i < keys.length; i += 2) {
            m.put(keys[i], keys[i + 1]);
        }
        return RollcallConfig.of(m);
    }

    @Test
    void awaitSettledReturnsOnceEveryCandidateHasAVerdict() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0", "1.4.0", "2.0.0")) {
            fleet.addUnresponsive();
            try (WorkerResolver r = WorkerResolver.fromConfig(config(
                    "rollcall.discovery.type", "static",
                    "rollcall.discovery.static.endpoints", fleet.endpointList(),
                    "rollcall.policy.type", "semver",
                    "rollcall.policy.semver.range", "^1.4.0",
                    "rollcall.probe.timeout", "1s"))) {
                FleetSnapshot s = r.awaitSettled(Duration.ofSeconds(20));
                assertThat(s.counts().pending()).isZero();
                assertThat(s.counts().candidates()).isEqualTo(4);
                assertThat(s.counts().compatible()).isEqualTo(2);
                assertThat(s.counts().rejected()).isEqualTo(1);
                assertThat(s.counts().unreachable()).isEqualTo(1);
            }
        }
    }

    @Test
    void discoveryThatNeverAnsweredIsNamedWithItsCauseInEveryWait() throws Exception {
        Path missing = dir.resolve("workers.txt");
        try (WorkerResolver r = WorkerResolver.fromConfig(config(
                "rollcall.discovery.type", "static",
                "rollcall.discovery.static.file", missing.toString(),
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.4.0"))) {
            assertThatThrownBy(() -> r.awaitWorkers(1, Duration.ofSeconds(2)))
                    .isInstanceOf(WorkersUnavailableException.class)
                    .hasMessageContaining("discovery has not answered since start-up")
                    .hasMessageContaining(missing.toString());
            assertThatThrownBy(() -> r.awaitSettled(Duration.ofMillis(500)))
                    .isInstanceOf(TimeoutException.class)
                    .hasMessageContaining("did not settle")
                    .hasMessageContaining("discovery has not answered since start-up")
                    .hasMessageContaining(missing.toString());
        }
    }
}
