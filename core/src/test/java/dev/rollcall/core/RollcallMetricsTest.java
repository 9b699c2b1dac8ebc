package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.worker.RollcallWorker;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class RollcallMetricsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    /** Discovery that hands the test its listener. */
    private static final class Handle implements WorkerDiscovery {
        final CompletableFuture<CandidateListener> listener = new CompletableFuture<>();

        @Override
        public void start(CandidateListener l) {
            listener.complete(l);
        }

        @Override
        public void close() {
        }

        CandidateListener get() throws Exception {
            return listener.get(5, TimeUnit.SECONDS);
        }
    }

    private static double gauge(MeterRegistry registry, String name, String state) {
        var search = registry.find(name).tag("resolver", "metrics-test");
        if (state != null) {
            search = search.tag("state", state);
        }
        return search.gauge().value();
    }

    @Test
    void showsTheFleetProbesAndStalenessInARegistry() throws Exception {
        VersionPolicy oneDotX = w -> w.version().startsWith("1.") ? Verdict.accept() : Verdict.reject("not 1.x");
        Handle discovery = new Handle();
        WorkerEndpoint nobody;
        try (ServerSocket s = new ServerSocket(0)) {
            nobody = WorkerEndpoint.parse("grpc://127.0.0.1:" + s.getLocalPort());
        }
        try (RollcallWorker a = RollcallWorker.builder().version("1.0.0").start();
             RollcallWorker b = RollcallWorker.builder().version("1.0.0").start();
             RollcallWorker c = RollcallWorker.builder().version("2.0.0").start();
             WorkerResolver resolver = WorkerResolver.builder().name("metrics-test").discovery(discovery)
                     .policy(oneDotX).backoff(Duration.ofSeconds(30), Duration.ofSeconds(30))
                     // A loaded machine must not turn a slow first answer into a failure the counts show.
                     .probeTimeout(Duration.ofSeconds(30)).build()) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new RollcallMetrics(resolver).bindTo(registry);

            discovery.get().onCandidates(Set.of(a.endpoint(), b.endpoint(), c.endpoint(), nobody));
            var snap = resolver.await(s -> s.counts().pending() == 0 && s.counts().candidates() == 4, WAIT);

            assertThat(gauge(registry, "rollcall.workers", "compatible")).isEqualTo(2);
            assertThat(gauge(registry, "rollcall.workers", "rejected")).isEqualTo(1);
            assertThat(gauge(registry, "rollcall.workers", "unreachable")).isEqualTo(1);
            // Listeners hear of a snapshot after it is published: wait for the rows, not for a time.
            Awaitility.await().atMost(WAIT).untilAsserted(() -> {
                assertThat(registry.find("rollcall.workers.versions").tag("version", "1.0.0").gauge().value())
                        .isEqualTo(2);
                assertThat(registry.find("rollcall.workers.versions").tag("version", "2.0.0").gauge().value())
                        .isEqualTo(1);
            });
            assertThat(gauge(registry, "rollcall.workers", "pending")).isZero();
            assertThat(gauge(registry, "rollcall.snapshot.number", null)).isEqualTo(snap.number());
            assertThat(gauge(registry, "rollcall.discovery.staleness", null)).isZero();
            assertThat(registry.get("rollcall.probes.sent").functionCounter().count()).isEqualTo(4);
            assertThat(registry.get("rollcall.probes.failed").functionCounter().count()).isEqualTo(1);
            assertThat(registry.get("rollcall.probe.latency").tag("outcome", "answered").timer().count())
                    .isEqualTo(3);
            assertThat(registry.get("rollcall.probe.latency").tag("outcome", "failed").timer().count())
                    .isEqualTo(1);
            assertThat(registry.get("rollcall.probe.latency").tag("outcome", "answered").timer()
                    .totalTime(TimeUnit.NANOSECONDS)).isPositive();

            discovery.get().onError(new IllegalStateException("backend down"));
            resolver.await(s -> s.staleSince().isPresent(), WAIT);
            Awaitility.await().atMost(WAIT)
                    .until(() -> gauge(registry, "rollcall.discovery.staleness", null) > 0);
            assertThat(gauge(registry, "rollcall.workers", "compatible")).as("the last set is kept").isEqualTo(2);
        }
    }

    @Test
    void theWorkerStatesPartitionTheCandidatesSoAnUntaggedReadIsTheFleetSize() throws Exception {
        Handle discovery = new Handle();
        try (RollcallWorker a = RollcallWorker.builder().version("1.0.0").start();
             RollcallWorker b = RollcallWorker.builder().version("1.0.0").start();
             RollcallWorker c = RollcallWorker.builder().version("1.0.0").start();
             WorkerResolver resolver = WorkerResolver.builder().name("metrics-test").discovery(discovery)
                     .policy(w -> Verdict.accept()).probeTimeout(Duration.ofSeconds(30)).build()) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new RollcallMetrics(resolver).bindTo(registry);

            discovery.get().onCandidates(Set.of(a.endpoint(), b.endpoint(), c.endpoint()));
            resolver.await(s -> s.counts().compatible() == 3, WAIT);

            // What a dashboard's sum(rollcall_workers) or an untagged Micrometer read adds up.
            double untagged = registry.find("rollcall.workers").tag("resolver", "metrics-test").gauges().stream()
                    .mapToDouble(Gauge::value).sum();
            assertThat(untagged).as("rollcall.workers summed over its states, a fleet of 3").isEqualTo(3);
            assertThat(gauge(registry, "rollcall.workers", "compatible")).isEqualTo(3);
        }
    }

    @Test
    void metersListedInTheJavadocAreTheOnesRegistered() throws Exception {
        Handle discovery = new Handle();
        try (WorkerResolver resolver = WorkerResolver.builder().name("metrics-test").discovery(discovery)
                .policy(w -> Verdict.accept()).build()) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new RollcallMetrics(resolver).bindTo(registry);
            assertThat(registry.getMeters()).extracting(m -> m.getId().getName()).containsOnly(
                    "rollcall.workers", "rollcall.snapshot.number", "rollcall.discovery.staleness",
                    "rollcall.probes.sent", "rollcall.probes.failed", "rollcall.probe.latency",
                    "rollcall.version.claims.differed", "rollcall.probe.kept-channels", "rollcall.probe.over-kept-cap",
                    "rollcall.workers.damped");
            assertThat(registry.getMeters()).hasSize(17); // rollcall.workers has 7 states (outside_subset too), the latency 2 outcomes
        }
    }

    @Test
    void aClosedBindingStopsCountingAndLeavesNoHookOnTheResolver() throws Exception {
        Handle discovery = new Handle();
        try (RollcallWorker first = RollcallWorker.builder().version("1.0.0").start();
             RollcallWorker second = RollcallWorker.builder().version("1.0.0").start();
             WorkerResolver resolver = WorkerResolver.builder().name("metrics-test").discovery(discovery)
                     .policy(w -> Verdict.accept()).probeTimeout(Duration.ofSeconds(30)).build()) {
            SimpleMeterRegistry kept = new SimpleMeterRegistry();
            SimpleMeterRegistry dropped = new SimpleMeterRegistry();
            new RollcallMetrics(resolver).bindTo(kept);
            RollcallMetrics closing = new RollcallMetrics(resolver);
            closing.bindTo(dropped);
            closing.close();

            discovery.get().onCandidates(Set.of(first.endpoint(), second.endpoint()));
            resolver.await(s -> s.counts().compatible() == 2, WAIT);
            Awaitility.await().atMost(WAIT).until(() ->
                    kept.get("rollcall.probe.latency").tag("outcome", "answered").timer().count() == 2);
            assertThat(dropped.get("rollcall.probe.latency").tag("outcome", "answered").timer().count())
                    .as("probes recorded after close()").isZero();
        }
    }
}
