package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The {@code capabilities} policy from configuration, over real gRPC on loopback: a worker without
 * the baseline is rejected naming what it lacks, and is kept once it pushes the capability (no
 * restart, no new probe needed); the range still holds beside the baseline.
 */
class CapabilitiesBaselineTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void aWorkerWithoutTheBaselineIsRejectedUntilItPushesIt() throws Exception {
        try (RollcallWorker current = RollcallWorker.builder().version("1.4.0").capabilities("plan-protocol=3").start();
             RollcallWorker behind = RollcallWorker.builder().version("1.4.0").capabilities("plan-protocol=2").start();
             RollcallWorker newer = RollcallWorker.builder().version("2.0.0").capabilities("plan-protocol=3").start();
             WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                     "rollcall.discovery.type", "static",
                     "rollcall.discovery.static.endpoints", String.join(",", current.endpoint().url(),
                             behind.endpoint().url(), newer.endpoint().url()),
                     "rollcall.policy.type", "capabilities",
                     "rollcall.policy.capabilities.baseline", "plan-protocol>=3",
                     "rollcall.policy.capabilities.range", "^1.4",
                     "rollcall.probe.backoff.initial", "20ms",
                     "rollcall.probe.backoff.max", "200ms")))) {
            FleetSnapshot first = resolver.awaitSettled(WAIT);
            assertThat(first.policy()).isEqualTo("capabilities plan-protocol>=3 within semver ^1.4");
            assertThat(first.workers()).extracting(w -> w.endpoint()).containsExactly(current.endpoint());
            assertThat(status(first, behind)).isEqualTo(State.REJECTED + ": lacks plan-protocol>=3 (has plan-protocol=2)");
            assertThat(status(first, newer)).isEqualTo(State.REJECTED + ": version '2.0.0' is outside ^1.4");

            behind.capabilities(Capabilities.of("plan-protocol=3"));

            FleetSnapshot caughtUp = resolver.await(s -> s.counts().compatible() == 2, WAIT);
            assertThat(caughtUp.workers()).extracting(w -> w.instanceId())
                    .containsExactlyInAnyOrder(current.instanceId(), behind.instanceId());
            assertThat(status(caughtUp, newer)).isEqualTo(State.REJECTED + ": version '2.0.0' is outside ^1.4");
        }
    }

    private static String status(FleetSnapshot snapshot, RollcallWorker worker) {
        WorkerStatus s = snapshot.status(worker.endpoint().url()).orElseThrow();
        return s.state() + ": " + s.reason();
    }
}
