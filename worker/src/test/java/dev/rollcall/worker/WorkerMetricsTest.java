package dev.rollcall.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Result;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * {@link WorkerMetrics} on a real worker over loopback: coordinators written with the generated
 * stubs ({@link TestCoordinator}) watch and hold it, an Arrow Flight client keeps a call open, and
 * the gauges read what the worker says.
 */
class WorkerMetricsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    /** An action that stays open until the test lets it go: a call in flight. */
    private static final class HeldAction extends NoOpFlightProducer {
        final CountDownLatch started = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
            started.countDown();
            try {
                release.await();
                listener.onCompleted();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                listener.onError(e);
            }
        }
    }

    private static double gauge(SimpleMeterRegistry registry, String name) {
        return registry.get(name).gauge().value();
    }

    private static double state(SimpleMeterRegistry registry, String state) {
        return registry.get("rollcall.worker.state").tag("state", state).gauge().value();
    }

    private static void awaitState(SimpleMeterRegistry registry, String expected) {
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(state(registry, expected)).as(expected).isEqualTo(1.0);
            assertThat(state(registry, "serving") + state(registry, "draining") + state(registry, "not_serving"))
                    .as("one state at a time").isEqualTo(1.0);
        });
    }

    @Test
    void theStateFollowsNotServingServingDrainAndResume() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").startNotServing().start()) {
            new WorkerMetrics(worker).bindTo(registry);
            awaitState(registry, "not_serving");

            worker.serving();
            awaitState(registry, "serving");

            worker.drain();
            awaitState(registry, "draining");
            assertThat(state(registry, "serving")).isZero();

            worker.resume();
            awaitState(registry, "serving");
        }
    }

    @Test
    void watchersHoldersAndCallsInFlightAreCountedAsRealPeersComeAndGo() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        HeldAction action = new HeldAction();
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").flightProducer(action).start();
             BufferAllocator allocator = new RootAllocator();
             FlightClient flight = FlightClient.builder(allocator,
                     Location.forGrpcInsecure("127.0.0.1", worker.port())).build()) {
            new WorkerMetrics(worker).bindTo(registry);
            assertThat(gauge(registry, "rollcall.worker.coordinators.watching")).isZero();
            assertThat(gauge(registry, "rollcall.worker.calls.in-flight")).isZero();

            try (TestCoordinator holder = TestCoordinator.watch(worker.port(), "coordinator-a");
                 TestCoordinator older = TestCoordinator.watch(worker.port(), "")) {
                holder.awaitAnswer(a -> true);
                older.awaitAnswer(a -> true);
                await().atMost(WAIT).untilAsserted(() -> {
                    assertThat(gauge(registry, "rollcall.worker.coordinators.watching")).isEqualTo(2.0);
                    assertThat(gauge(registry, "rollcall.worker.coordinators.holding"))
                            .as("only a stream with a holder id holds").isEqualTo(1.0);
                });

                CompletableFuture<Void> call = CompletableFuture.runAsync(() -> {
                    Iterator<Result> results = flight.doAction(new Action("held"));
                    results.forEachRemaining(r -> { });
                });
                assertThat(action.started.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
                await().atMost(WAIT).until(() -> gauge(registry, "rollcall.worker.calls.in-flight") == 1.0);
                assertThat(gauge(registry, "rollcall.worker.coordinators.watching"))
                        .as("a Flight call is no watch").isEqualTo(2.0);

                action.release.countDown();
                call.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                await().atMost(WAIT).until(() -> gauge(registry, "rollcall.worker.calls.in-flight") == 0.0);

                holder.cancel();
                await().atMost(WAIT).untilAsserted(() -> {
                    assertThat(gauge(registry, "rollcall.worker.coordinators.watching")).isEqualTo(1.0);
                    assertThat(gauge(registry, "rollcall.worker.coordinators.holding")).isZero();
                });
            }
            await().atMost(WAIT).until(() -> gauge(registry, "rollcall.worker.coordinators.watching") == 0.0);
        }
    }

    @Test
    void metersListedInTheJavadocAreTheOnesRegistered() throws Exception {
        String source = Files.readString(Path.of("src/main/java/dev/rollcall/worker/WorkerMetrics.java"),
                StandardCharsets.UTF_8);
        Matcher listed = Pattern.compile("<li>\\{@code (rollcall\\.[a-z.-]+)\\}").matcher(source);
        Set<String> documented = new HashSet<>();
        while (listed.find()) {
            documented.add(listed.group(1));
        }
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").start()) {
            new WorkerMetrics(worker).bindTo(registry);
        }
        assertThat(registry.getMeters().stream().map(m -> m.getId().getName()).collect(Collectors.toSet()))
                .isEqualTo(documented)
                .containsOnly("rollcall.worker.state", "rollcall.worker.coordinators.watching",
                        "rollcall.worker.coordinators.holding", "rollcall.worker.calls.in-flight");
        assertThat(registry.getMeters()).as("three state rows and three counts").hasSize(6);
        // Tags a peer could choose would let it grow the registry without bound: only the state's own.
        assertThat(registry.getMeters().stream().flatMap(m -> m.getId().getTags().stream())
                .map(t -> t.getKey() + "=" + t.getValue()).collect(Collectors.toSet()))
                .containsOnly("state=serving", "state=draining", "state=not_serving");
        assertThat(registry.getMeters()).extracting(Meter::getId).extracting(Meter.Id::getType)
                .containsOnly(Meter.Type.GAUGE);
    }
}
