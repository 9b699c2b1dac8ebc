package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetEvent;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.local.WorkerFleet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Flap damping leaves honest workers alone: of three real workers on loopback one drains and
 * resumes, another restarts in place, then all three are upgraded one after another (drained,
 * restarted with the next version) within seconds, and no snapshot ever shows one damped, no
 * {@link FleetEvent.WorkerDamped} is told.
 */
class HonestChangesAreNotDampedTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void aDrainAndResumeARestartInPlaceAndARollingUpgradeDampNoWorker() throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0", "1.4.0", "1.4.0");
             WorkerResolver r = WorkerResolver.builder().name("honest").discovery(discovery)
                     .policy(w -> w.version().startsWith("1.") ? Verdict.accept() : Verdict.reject("not 1.x"))
                     .fetchSchemas(false).build()) {
            List<FleetSnapshot> seen = new CopyOnWriteArrayList<>();
            List<FleetEvent> events = new CopyOnWriteArrayList<>();
            r.addListener(seen::add);
            r.addEventListener(events::add);
            discovery.push(fleet.endpoints());
            r.awaitWorkers(3, WAIT);
            FleetWorker first = fleet.worker(0);
            FleetWorker second = fleet.worker(1);

            first.drain();
            r.await(s -> state(s, first) == WorkerStatus.State.DRAINING, WAIT);
            first.resume();
            r.await(s -> s.workers().size() == 3, WAIT);

            second.restart("1.4.0");
            r.await(s -> s.workers().size() == 3 && instanceIn(s, second), WAIT);

            for (FleetWorker w : fleet.workers()) { // the rolling upgrade, right after: the first two included
                w.drain();
                r.await(s -> state(s, w) == WorkerStatus.State.DRAINING, WAIT);
                w.restart("1.5.0");
                r.await(s -> s.workers().size() == 3 && instanceIn(s, w), WAIT);
            }
            FleetSnapshot end = r.await(s -> s.workers().stream().allMatch(i -> i.version().equals("1.5.0"))
                    && s.workers().size() == 3, WAIT);

            assertThat(end.workers()).hasSize(3);
            assertThat(seen).flatExtracting(FleetSnapshot::statuses).filteredOn(FleetEvent.WorkerDamped::shows)
                    .as("statuses damped for flapping").isEmpty();
            assertThat(events).filteredOn(e -> e instanceof FleetEvent.WorkerDamped).isEmpty();
        }
    }

    private static WorkerStatus.State state(FleetSnapshot s, FleetWorker w) {
        return s.status(w.endpoint().url()).map(WorkerStatus::state).orElse(null);
    }

    private static boolean instanceIn(FleetSnapshot s, FleetWorker w) {
        return s.workers().stream().anyMatch(i -> i.endpoint().url().equals(w.endpoint().url())
                && i.instanceId().equals(w.instanceId()));
    }
}
