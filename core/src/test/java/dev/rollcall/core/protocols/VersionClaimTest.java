package dev.rollcall.core.protocols;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetEvent;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.RollcallMetrics;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Claim against answer: discovery says one version, the worker another; the answer wins, and says so. */
class VersionClaimTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void aClaimThatDiffersFromTheAnswerIsAnEventAndACountAndTheAnswerIsJudged() throws Exception {
        HandedDiscovery discovery = new HandedDiscovery();
        List<FleetEvent> events = new CopyOnWriteArrayList<>();
        try (RollcallWorker mislabelled = RollcallWorker.builder().version("1.5.0").start();
             RollcallWorker honest = RollcallWorker.builder().version("1.5.0").start();
             WorkerResolver resolver = WorkerResolver.builder().name("claims").discovery(discovery)
                     .policy(w -> w.version().equals("1.5.0") ? Verdict.accept() : Verdict.reject("not 1.5.0"))
                     .build()) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new RollcallMetrics(resolver).bindTo(registry);
            resolver.addEventListener(events::add);
            WorkerEndpoint claims14 = mislabelled.endpoint().withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.4.0"));
            WorkerEndpoint claims15 = honest.endpoint().withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.5.0"));
            discovery.offer(claims14, claims15);

            FleetSnapshot s = resolver.await(x -> x.counts().compatible() == 2, WAIT);
            assertThat(s.status(claims14.url()).orElseThrow().state()).as("the answer wins").isEqualTo(State.COMPATIBLE);
            Awaitility.await().atMost(WAIT).until(() -> events.stream().anyMatch(FleetEvent.VersionClaimDiffers.class::isInstance));
            List<FleetEvent.VersionClaimDiffers> differed = events.stream()
                    .filter(FleetEvent.VersionClaimDiffers.class::isInstance)
                    .map(FleetEvent.VersionClaimDiffers.class::cast).toList();
            assertThat(differed).hasSize(1);
            assertThat(differed.get(0).endpoint().url()).isEqualTo(claims14.url());
            assertThat(differed.get(0).description()).isEqualTo("claimed 1.4.0, answered 1.5.0");
            Awaitility.await().atMost(WAIT).until(() ->
                    registry.get("rollcall.version.claims.differed").counter().count() == 1.0);

            // Told once: a later snapshot with the same pair says nothing more (the third worker's
            // join shows that the listener has seen that snapshot).
            try (RollcallWorker third = RollcallWorker.builder().version("1.5.0").start()) {
                discovery.offer(claims14, claims15, third.endpoint());
                Awaitility.await().atMost(WAIT).until(() -> events.stream().anyMatch(e ->
                        e instanceof FleetEvent.WorkerJoined j && j.worker().endpoint().url().equals(third.endpoint().url())));
                assertThat(events.stream().filter(FleetEvent.VersionClaimDiffers.class::isInstance)).hasSize(1);
            }
        }
    }

    @Test
    void aProtocolWhoseVersionIsTheClaimNeverDiffers() throws Exception {
        HandedDiscovery discovery = new HandedDiscovery();
        List<FleetEvent> events = new CopyOnWriteArrayList<>();
        try (WorkerResolver resolver = WorkerResolver.builder().name("claims-none").discovery(discovery)
                .policy(w -> Verdict.accept()).probeProtocol("none").build()) {
            resolver.addEventListener(events::add);
            WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", 1).withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.4.0"));
            discovery.offer(e);
            resolver.await(x -> x.counts().compatible() == 1, WAIT);
            Awaitility.await().atMost(WAIT).until(() -> events.stream().anyMatch(FleetEvent.WorkerJoined.class::isInstance));
            assertThat(events).noneMatch(FleetEvent.VersionClaimDiffers.class::isInstance);
        }
    }
}
