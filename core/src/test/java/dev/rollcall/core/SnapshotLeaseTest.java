package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.Status;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Leases and exact drain over real gRPC on loopback: a lease pins its snapshot; with
 * {@code rollcall.drain.exact=true} a draining worker is released ({@code ReleaseWorker}) right after
 * the publish without it, or when the last lease of a snapshot that lists it closes; failed releases
 * are retried only when they may succeed; without exact drain nothing changes on the wire. The
 * retry timing itself is tested in virtual time ({@code DrainReleasesTest}).
 */
class SnapshotLeaseTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** How long a release that should not come is given to come anyway: more than two 250 ms retries. */
    private static final Duration QUIET = Duration.ofMillis(700);

    /** Discovery whose set the test changes. */
    private static final class Feed implements WorkerDiscovery {
        private final CompletableFuture<CandidateListener> listener = new CompletableFuture<>();
        private final Set<WorkerEndpoint> first;

        Feed(WorkerEndpoint... first) {
            this.first = Set.of(first);
        }

        @Override
        public void start(CandidateListener l) {
            l.onCandidates(first);
            listener.complete(l);
        }

        void set(WorkerEndpoint... now) throws Exception {
            listener.get(5, TimeUnit.SECONDS).onCandidates(Set.of(now));
        }

        @Override
        public void close() {
        }
    }

    private static WorkerResolver.Builder resolver(Feed feed, boolean exact) {
        return WorkerResolver.builder().name("lease-test").discovery(feed).policy(w -> Verdict.accept())
                .fetchSchemas(false).probeTimeout(Duration.ofSeconds(5)).exactDrain(exact);
    }

    private static RollcallWorker worker(Duration drainQuiet) throws java.io.IOException {
        return RollcallWorker.builder().version("1.0.0").shutdownGrace(Duration.ofSeconds(30)).drainQuiet(drainQuiet)
                .start();
    }

    private static boolean lists(FleetSnapshot s, WorkerEndpoint e) {
        return s.status(e.url()).map(st -> st.state() == dev.rollcall.api.registry.WorkerStatus.State.COMPATIBLE)
                .orElse(false);
    }

    @Test
    void aLeasePinsItsSnapshotAndClosesOnceFromAnyThread() throws Exception {
        try (RollcallWorker a = worker(Duration.ofMillis(500));
             RollcallWorker b = worker(Duration.ofMillis(500))) {
            Feed feed = new Feed(a.endpoint());
            try (WorkerResolver resolver = resolver(feed, true).build()) {
                resolver.awaitWorkers(1, WAIT);
                SnapshotLease lease = resolver.lease();
                FleetSnapshot pinned = lease.snapshot();
                assertThat(lists(pinned, a.endpoint())).isTrue();
                feed.set(a.endpoint(), b.endpoint());
                resolver.awaitWorkers(2, WAIT);
                assertThat(lease.snapshot()).as("the same snapshot after a publish").isSameAs(pinned);
                CompletableFuture.runAsync(lease::close).get(5, TimeUnit.SECONDS);
                lease.close();
                assertThat(lease.snapshot()).isSameAs(pinned);
                assertThat(lease).hasToString("SnapshotLease[snapshot " + pinned.number() + ", closed]");
            }
        }
    }

    @Test
    void withoutExactDrainALeaseOnlyPins() throws Exception {
        try (RollcallWorker a = worker(Duration.ofMillis(500))) {
            try (WorkerResolver resolver = resolver(new Feed(a.endpoint()), false).build()) {
                resolver.awaitWorkers(1, WAIT);
                try (SnapshotLease lease = resolver.lease()) {
                    assertThat(lease.snapshot()).isSameAs(resolver.pin());
                    a.drain();
                    resolver.await(s -> s.counts().draining() == 1, WAIT);
                    assertThat(lists(lease.snapshot(), a.endpoint())).isTrue();
                    assertThat(a.coordinatorsHolding()).as("an old-style watcher holds nothing").isZero();
                }
            }
        }
    }

    @Test
    void aDrainingWorkerIsReleasedWhenTheLastLeaseOfASnapshotThatListsItCloses() throws Exception {
        try (RollcallWorker a = worker(Duration.ofSeconds(20));
             WorkerResolver resolver = resolver(new Feed(a.endpoint()), true).build()) {
            resolver.awaitWorkers(1, WAIT);
            await().atMost(WAIT).until(() -> a.coordinatorsHolding() == 1);
            SnapshotLease first = resolver.lease();
            SnapshotLease second = resolver.lease();
            a.drain();
            resolver.await(s -> !lists(s, a.endpoint()), WAIT);
            await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> a.coordinatorsHolding() == 1);
            first.close();
            await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> a.coordinatorsHolding() == 1);
            long closed = System.nanoTime();
            second.close();
            await().atMost(WAIT).until(() -> a.coordinatorsHolding() == 0);
            assertThat(Duration.ofNanos(System.nanoTime() - closed)).as("from the last lease's close to the release")
                    .isLessThan(Duration.ofSeconds(5));
        }
    }

    @Test
    void aDrainingWorkerNoLeaseHoldsIsReleasedRightAfterThePublishWithoutIt() throws Exception {
        Duration quiet = Duration.ofSeconds(20); // drain-quiet: a close that waited for it did not end exactly
        RollcallWorker a = worker(quiet);
        try (WorkerResolver resolver = resolver(new Feed(a.endpoint()), true).build()) {
            resolver.awaitWorkers(1, WAIT);
            await().atMost(WAIT).until(() -> a.coordinatorsHolding() == 1);
            try (SnapshotLease before = resolver.lease()) {
                assertThat(lists(before.snapshot(), a.endpoint())).isTrue();
            }
            long start = System.nanoTime();
            a.close(); // drains, then waits for the holder
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("from close() to its return")
                    .isLessThan(quiet.dividedBy(2));
        } finally {
            a.close();
        }
    }

    @Test
    void anUnavailableReleaseIsRetried() throws Exception {
        try (ScriptedWorker w = ScriptedWorker.releasing(Status.Code.UNAVAILABLE, Status.Code.UNAVAILABLE);
             WorkerResolver resolver = resolver(new Feed(w.endpoint()), true).build()) {
            resolver.awaitWorkers(1, WAIT);
            w.answer(ServingState.DRAINING, w.instanceId());
            await().atMost(WAIT).until(() -> w.releases().size() == 3);
            await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> w.releases().size() == 3);
            assertThat(w.releases()).extracting(ReleaseWorkerRequest::getInstanceId).containsOnly("instance-1");
        }
    }

    @Test
    void aReleaseRefusedAsAnotherInstanceOrUnimplementedIsNotRetried() throws Exception {
        try (ScriptedWorker successor = ScriptedWorker.releasing(Status.Code.FAILED_PRECONDITION);
             ScriptedWorker old = ScriptedWorker.beforeExactDrain();
             WorkerResolver resolver = resolver(new Feed(successor.endpoint(), old.endpoint()), true).build()) {
            resolver.awaitWorkers(2, WAIT);
            successor.answer(ServingState.DRAINING, successor.instanceId());
            old.answer(ServingState.DRAINING, old.instanceId());
            await().atMost(WAIT).until(() -> successor.releases().size() == 1 && old.releases().size() == 1);
            await().during(QUIET).atMost(QUIET.multipliedBy(3))
                    .until(() -> successor.releases().size() == 1 && old.releases().size() == 1);
            old.answer(ServingState.SERVING, old.instanceId());
            resolver.await(s -> lists(s, old.endpoint()), WAIT); // the old worker keeps working
        }
    }

    @Test
    void aResumeOrARestartInPlaceIsReleasedAgainAtItsNextDrain() throws Exception {
        try (ScriptedWorker w = ScriptedWorker.releasing();
             WorkerResolver resolver = resolver(new Feed(w.endpoint()), true).build()) {
            resolver.awaitWorkers(1, WAIT);
            w.answer(ServingState.DRAINING, "instance-1");
            await().atMost(WAIT).until(() -> w.releases().size() == 1);
            w.answer(ServingState.SERVING, "instance-1");
            resolver.await(s -> lists(s, w.endpoint()), WAIT);
            w.answer(ServingState.DRAINING, "instance-1");
            await().atMost(WAIT).until(() -> w.releases().size() == 2);
            w.answer(ServingState.DRAINING, "instance-2");
            await().atMost(WAIT).until(() -> w.releases().size() == 3);
            assertThat(w.releases()).extracting(ReleaseWorkerRequest::getInstanceId)
                    .containsExactly("instance-1", "instance-1", "instance-2");
        }
    }

    @Test
    void exactDrainSendsEachWorkerItsOwnHolderIdOnWatchAndReleaseAndOldStyleSendsNoneAndNoRelease() throws Exception {
        try (ScriptedWorker exact = ScriptedWorker.releasing();
             ScriptedWorker other = ScriptedWorker.releasing();
             ScriptedWorker plain = ScriptedWorker.releasing()) {
            try (WorkerResolver one = resolver(new Feed(exact.endpoint(), other.endpoint()), true).build();
                 WorkerResolver two = resolver(new Feed(exact.endpoint()), true).build()) {
                one.awaitWorkers(2, WAIT);
                two.awaitWorkers(1, WAIT);
                assertThat(exact.holderIds()).hasSize(2).allMatch(id -> id.matches("[A-Za-z0-9_-]{43}"));
                assertThat(exact.holderIds().get(0)).as("each resolver its own id").isNotEqualTo(exact.holderIds().get(1));
                assertThat(other.holderIds()).as("each worker its own id").singleElement()
                        .isNotIn(exact.holderIds());
                exact.answer(ServingState.DRAINING, exact.instanceId());
                await().atMost(WAIT).until(() -> exact.releases().size() == 2);
                assertThat(exact.releases()).as("a release carries the id of that worker's watch")
                        .extracting(ReleaseWorkerRequest::getHolderId)
                        .containsExactlyInAnyOrderElementsOf(exact.holderIds());
            }
            try (WorkerResolver resolver = resolver(new Feed(plain.endpoint()), false).build()) {
                resolver.awaitWorkers(1, WAIT);
                plain.answer(ServingState.DRAINING, plain.instanceId());
                resolver.await(s -> s.counts().draining() == 1, WAIT);
                await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> plain.releases().isEmpty());
                assertThat(plain.holderIds()).containsOnly("");
            }
        }
    }

    @Test
    void exactDrainWithoutKeptChannelsFailsNamingBothKeys() {
        assertThatThrownBy(() -> resolver(new Feed(), true).keepProbeChannels(false).build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.drain.exact").hasMessageContaining("rollcall.probe.keep-channels");
        RollcallConfig config = RollcallConfig.of(Map.of("rollcall.drain.exact", "true",
                "rollcall.probe.keep-channels", "false"));
        assertThatThrownBy(() -> WorkerResolver.builder().config(config).discovery(new Feed())
                .policy(w -> Verdict.accept()).build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.drain.exact").hasMessageContaining("rollcall.probe.keep-channels");
    }

    @Test
    void exactDrainWithAnotherProbeProtocolFailsNamingBothKeys() {
        // Holder streams and ReleaseWorker exist only in rollcall.v1: grpc-health or none cannot hold a worker.
        assertThatThrownBy(() -> resolver(new Feed(), true).probeProtocol("grpc-health").build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.drain.exact").hasMessageContaining("rollcall.probe.protocol")
                .hasMessageContaining("'grpc-health'");
        RollcallConfig config = RollcallConfig.of(Map.of("rollcall.drain.exact", "true",
                "rollcall.probe.protocol", "none"));
        assertThatThrownBy(() -> WorkerResolver.builder().config(config).discovery(new Feed())
                .policy(w -> Verdict.accept()).build())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.drain.exact").hasMessageContaining("'none'");
    }

    @Test
    void theKeyIsKnownAndChecked() {
        try (WorkerResolver resolver = WorkerResolver.builder().discovery(new Feed()).policy(w -> Verdict.accept())
                .config(RollcallConfig.of(Map.of("rollcall.drain.exact", "true"))).build()) {
            assertThat(resolver.lease().snapshot().number()).isGreaterThanOrEqualTo(0);
        }
        assertThatThrownBy(() -> WorkerResolver.builder().discovery(new Feed()).policy(w -> Verdict.accept())
                .config(RollcallConfig.of(Map.of("rollcall.drain.exact", "yes"))).build())
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("rollcall.drain.exact");
        assertThatThrownBy(() -> WorkerResolver.builder().discovery(new Feed()).policy(w -> Verdict.accept())
                .config(RollcallConfig.of(Map.of("rollcall.drain.exakt", "true"))).build())
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("did you mean rollcall.drain.exact?");
    }
}
