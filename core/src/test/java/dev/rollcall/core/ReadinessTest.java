package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.worker.RollcallWorker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code rollcall.readiness.*}: when {@link WorkerResolver#ready()} says a coordinator may take work. */
class ReadinessTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Instant NOW = Instant.parse("2026-12-07T06:00:00Z");

    private static FleetSnapshot fleet(String... compatibleVersions) {
        FleetSnapshot.Builder b = FleetSnapshot.builder(3);
        int port = 7001;
        for (String v : compatibleVersions) {
            WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", port++);
            b.status(new WorkerStatus(e, State.COMPATIBLE, "", Optional.of(WorkerInfo.of(e, v))));
        }
        WorkerEndpoint down = WorkerEndpoint.of("127.0.0.1", port);
        b.status(new WorkerStatus(down, State.UNREACHABLE, "connection refused", Optional.empty()));
        return b.build();
    }

    private static ReadinessRule rule(Map<String, String> keys) {
        return ReadinessRule.read(Settings.of(keys));
    }

    @Test
    void byDefaultOneCompatibleWorkerMakesTheCoordinatorReady() {
        ReadinessRule rule = rule(Map.of());
        assertThat(rule.minWorkers()).isEqualTo(1);
        Readiness none = rule.evaluate(fleet(), NOW);
        assertThat(none.ready()).isFalse();
        assertThat(none.reason()).contains("0 compatible workers (1 required)").contains("1 unreachable");
        Readiness one = rule.evaluate(fleet("1.0.0"), NOW);
        assertThat(one.ready()).isTrue();
        assertThat(one.compatibleWorkers()).isEqualTo(1);
        assertThat(one.required()).isEqualTo(1);
    }

    @Test
    void minWorkersZeroIsAlwaysReady() {
        Readiness r = rule(Map.of("rollcall.readiness.min-workers", "0")).evaluate(fleet(), NOW);
        assertThat(r.ready()).isTrue();
        assertThat(r.reason()).contains("min-workers=0");
    }

    @Test
    void aRequiredVersionCountsOnlyWorkersOfThatVersion() {
        ReadinessRule rule = rule(Map.of("rollcall.readiness.min-workers", "2", "rollcall.readiness.version", "1.5.0"));
        Readiness mixed = rule.evaluate(fleet("1.4.0", "1.4.0", "1.5.0"), NOW);
        assertThat(mixed.ready()).isFalse();
        assertThat(mixed.compatibleWorkers()).isEqualTo(1);
        assertThat(mixed.reason()).contains("1 compatible workers of version '1.5.0' (2 required)");
        assertThat(rule.evaluate(fleet("1.4.0", "1.5.0", "1.5.0"), NOW).ready()).isTrue();
    }

    @Test
    void badValuesNameTheKeyAndWhatWasExpected() {
        assertThatThrownBy(() -> rule(Map.of("rollcall.readiness.min-workers", "-1")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.readiness.min-workers").hasMessageContaining("-1")
                .hasMessageContaining("a whole number from 0 to 1000000");
        assertThatThrownBy(() -> rule(Map.of("rollcall.readiness.min-workers", "0", "rollcall.readiness.version", "2")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("rollcall.readiness.version");
    }

    @Test
    void aTypoInAReadinessKeyFailsTheResolverNamingTheNearestKey() {
        Map<String, String> m = new HashMap<>();
        m.put("rollcall.discovery.type", "nothing");
        m.put("rollcall.policy.type", "any");
        m.put("rollcall.readiness.min-worker", "2");
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(m)))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.readiness.min-worker")
                .hasMessageContaining("did you mean rollcall.readiness.min-workers?");
    }

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
    }

    @Test
    void readyFollowsTheFleetUpAndDownAgainWhenAWorkerDrains() throws Exception {
        Handle discovery = new Handle();
        try (RollcallWorker a = RollcallWorker.builder().version("1.0.0").start();
             RollcallWorker b = RollcallWorker.builder().version("1.0.0").start();
             WorkerResolver resolver = WorkerResolver.builder().name("readiness-test").discovery(discovery)
                     .policy(w -> Verdict.accept()).probeTimeout(Duration.ofSeconds(30))
                     .config(RollcallConfig.of(Map.of("rollcall.readiness.min-workers", "2"))).build()) {
            assertThat(resolver.ready().ready()).as("no candidates yet").isFalse();
            CandidateListener feed = discovery.listener.get(5, TimeUnit.SECONDS);
            feed.onCandidates(Set.of(a.endpoint()));
            resolver.awaitWorkers(1, WAIT);
            assertThat(resolver.ready().ready()).as("1 of 2").isFalse();
            feed.onCandidates(Set.of(a.endpoint(), b.endpoint()));
            resolver.awaitWorkers(2, WAIT);
            assertThat(resolver.ready()).extracting(Readiness::ready, Readiness::compatibleWorkers)
                    .containsExactly(true, 2);
            b.drain();
            resolver.await(s -> s.counts().draining() == 1, WAIT);
            Readiness after = resolver.ready();
            assertThat(after.ready()).isFalse();
            assertThat(after.reason()).contains("1 compatible workers (2 required)").contains("1 draining");
        }
    }

    /** A snapshot of one compatible worker, stale since {@code since}. */
    private static FleetSnapshot staleSince(Instant since) {
        WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", 7001);
        return FleetSnapshot.builder(9).staleSince(since).discoveryProblem("discovery failing since " + since + ": etcd down")
                .status(new WorkerStatus(e, State.COMPATIBLE, "", Optional.of(WorkerInfo.of(e, "1.0.0")))).build();
    }

    @Test
    void maxStaleDefaultsToFiveMinutesUnderClaimsAndToNoBoundWhenWorkersAnswer() {
        ReadinessRule unset = rule(Map.of());
        assertThat(unset.forProtocol(true).maxStale()).isEqualTo(Duration.ofMinutes(5));
        assertThat(unset.forProtocol(false).maxStale()).isZero();
        assertThat(unset.forProtocol(false).evaluate(staleSince(NOW.minus(Duration.ofDays(7))), NOW).ready())
                .as("verified workers, a week-old set: no bound unless asked for").isTrue();
        ReadinessRule off = rule(Map.of("rollcall.readiness.max-stale", "0s")).forProtocol(true);
        assertThat(off.evaluate(staleSince(NOW.minus(Duration.ofDays(7))), NOW).ready()).as("0s: no bound").isTrue();
        ReadinessRule set = rule(Map.of("rollcall.readiness.max-stale", "1h")).forProtocol(false);
        assertThat(set.evaluate(staleSince(NOW.minus(Duration.ofMinutes(61))), NOW).ready())
                .as("a bound set applies to every protocol").isFalse();
        assertThatThrownBy(() -> rule(Map.of("rollcall.readiness.max-stale", "5")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.readiness.max-stale").hasMessageContaining("'5'");
    }

    @Test
    void aSnapshotStaleLongerThanMaxStaleIsNotReadyAndSaysForHowLong() {
        ReadinessRule rule = rule(Map.of("rollcall.readiness.max-stale", "5m")).forProtocol(true);
        assertThat(rule.evaluate(staleSince(NOW.minus(Duration.ofMinutes(5))), NOW).ready()).isTrue();
        Readiness r = rule.evaluate(staleSince(NOW.minus(Duration.ofMinutes(7)).minusSeconds(12)), NOW);
        assertThat(r.ready()).isFalse();
        assertThat(r.compatibleWorkers()).isEqualTo(1);
        assertThat(r.reason()).startsWith("discovery stale for 7m 12s (since 2026-12-07T05:52:48Z), longer than "
                + "rollcall.readiness.max-stale (5m)").contains("etcd down");
    }

    /** A clock the test moves; read from any thread. */
    private static final class SettableClock extends Clock {
        private volatile Instant now;

        SettableClock(Instant now) {
            this.now = now;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }
    }

    /**
     * Under {@code none} the versions are the registry's word: once discovery has been failing for
     * longer than {@code max-stale} (5 minutes by default there), the coordinator is not ready with
     * the claims it last heard, and is ready again as soon as discovery answers.
     */
    @Test
    void underNoneDiscoveryStaleLongerThanMaxStaleIsNotReadyUntilDiscoveryAnswersAgain() throws Exception {
        Handle discovery = new Handle();
        SettableClock clock = new SettableClock(NOW);
        WorkerEndpoint claimed = WorkerEndpoint.of("127.0.0.1", 7001).withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.0.0"));
        try (WorkerResolver resolver = WorkerResolver.builder().name("readiness-stale").discovery(discovery)
                .policy(w -> Verdict.accept()).probeProtocol("none").clock(clock).build()) {
            CandidateListener feed = discovery.listener.get(5, TimeUnit.SECONDS);
            feed.onCandidates(Set.of(claimed));
            resolver.awaitWorkers(1, WAIT);
            assertThat(resolver.ready().ready()).isTrue();

            feed.onError(new IllegalStateException("etcd unreachable"));
            resolver.await(s -> s.staleSince().isPresent(), WAIT);
            clock.advance(Duration.ofMinutes(5));
            assertThat(resolver.ready().ready()).as("stale for exactly max-stale").isTrue();
            clock.advance(Duration.ofSeconds(1));
            Readiness stale = resolver.ready();
            assertThat(stale.ready()).isFalse();
            assertThat(stale.compatibleWorkers()).as("the claim is still served, only not trusted to be ready on")
                    .isEqualTo(1);
            assertThat(stale.reason()).startsWith("discovery stale for 5m 1s").contains("rollcall.readiness.max-stale (5m)")
                    .contains("etcd unreachable");

            feed.onCandidates(Set.of(claimed));
            resolver.await(s -> s.staleSince().isEmpty(), WAIT);
            assertThat(resolver.ready().ready()).isTrue();
        }
    }
}
