package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Exact drain against peers that lie, black-box on loopback: a real resolver with
 * {@code rollcall.drain.exact=true}, a real worker W and a fake worker F that the resolver also
 * discovers (anyone who can write a registry entry). F learns only its own holder id, and W refuses,
 * without remembering it, a release whose id holds nothing there; a worker's refusal text reaches
 * the coordinator's log escaped.
 */
class ExactDrainHolderIdTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** How long a close that must not return is given to return anyway. */
    private static final Duration QUIET = Duration.ofMillis(700);

    private static final class Feed implements WorkerDiscovery {
        private final Set<WorkerEndpoint> endpoints;

        Feed(WorkerEndpoint... endpoints) {
            this.endpoints = Set.of(endpoints);
        }

        @Override
        public void start(CandidateListener listener) {
            listener.onCandidates(endpoints);
        }

        @Override
        public void close() {
        }
    }

    private static WorkerResolver exactDrain(WorkerEndpoint... endpoints) {
        return WorkerResolver.builder().name("holder-test").discovery(new Feed(endpoints))
                .policy(w -> Verdict.accept()).fetchSchemas(false).probeTimeout(Duration.ofSeconds(5))
                .exactDrain(true).build();
    }

    /** A worker whose close waits only for its holders: no quiet period, a grace no test waits out. */
    private static RollcallWorker worker() throws java.io.IOException {
        return RollcallWorker.builder().version("1.0.0").shutdownGrace(Duration.ofMinutes(5))
                .drainQuiet(Duration.ofMinutes(5)).start();
    }

    private static boolean lists(FleetSnapshot s, WorkerEndpoint e) {
        return s.status(e.url()).map(st -> st.state() == WorkerStatus.State.COMPATIBLE).orElse(false);
    }

    /** F's side: a {@code ReleaseWorker} sent to {@code worker} over a channel of its own; the status it got. */
    private static Status release(ManagedChannel channel, String holderId, String instanceId) {
        try {
            WorkerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS).releaseWorker(
                    ReleaseWorkerRequest.newBuilder().setHolderId(holderId).setInstanceId(instanceId).build());
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }

    private static ManagedChannel channelTo(RollcallWorker w) {
        return NettyChannelBuilder.forAddress("127.0.0.1", w.port()).usePlaintext().build();
    }

    @Test
    void aFakeWorkerCannotReleaseARealWorkerWithTheHolderIdItWasSent() throws Exception {
        RollcallWorker w = worker();
        ManagedChannel fakes = channelTo(w);
        try (ScriptedWorker f = ScriptedWorker.releasing();
             WorkerResolver resolver = exactDrain(w.endpoint(), f.endpoint())) {
            resolver.awaitWorkers(2, WAIT);
            await().atMost(WAIT).until(() -> w.coordinatorsHolding() == 1 && !f.holderIds().isEmpty());
            String learned = f.holderIds().get(0);
            CompletableFuture<Void> closed;
            try (SnapshotLease lease = resolver.lease()) {
                assertThat(lists(lease.snapshot(), w.endpoint())).isTrue();
                closed = CompletableFuture.runAsync(w::close); // drains, then waits for its holder
                resolver.await(s -> !lists(s, w.endpoint()), WAIT);

                Status lie = release(fakes, learned, w.instanceId());
                assertThat(lie.getCode()).as("F's release of W with the id F was sent: %s", lie)
                        .isEqualTo(Status.Code.NOT_FOUND);
                assertThat(lie.getDescription()).as("the refusal never tells the id in full")
                        .doesNotContain(learned);
                await().during(QUIET).atMost(QUIET.multipliedBy(3))
                        .until(() -> !closed.isDone() && w.coordinatorsHolding() == 1);
            }
            closed.get(WAIT.toSeconds(), TimeUnit.SECONDS); // the lease closed: the resolver's own release
        } finally {
            fakes.shutdownNow();
            w.close();
        }
    }

    @Test
    void releasesForIdsThatHoldNothingAreRefusedAndDoNotCrowdOutTheRealRelease() throws Exception {
        RollcallWorker w = worker();
        ManagedChannel strangers = channelTo(w);
        try (WorkerResolver resolver = exactDrain(w.endpoint())) {
            resolver.awaitWorkers(1, WAIT);
            await().atMost(WAIT).until(() -> w.coordinatorsHolding() == 1);
            CompletableFuture<Void> closed;
            List<Status> refusals = new ArrayList<>();
            try (SnapshotLease lease = resolver.lease()) {
                closed = CompletableFuture.runAsync(w::close);
                resolver.await(s -> !lists(s, w.endpoint()), WAIT);
                for (int i = 0; i < 1_100; i++) {
                    refusals.add(release(strangers, "nothing-" + i, w.instanceId()));
                }
                assertThat(closed).as("still held by the lease's coordinator").isNotDone();
            }
            // With a grace of minutes, a close within WAIT is the resolver's release, accepted.
            closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(refusals).extracting(Status::getCode).containsOnly(Status.Code.NOT_FOUND);
        } finally {
            strangers.shutdownNow();
            w.close();
        }
    }

    @Test
    void aWorkersRefusalTextReachesTheCoordinatorsLogOnlyEscaped() throws Exception {
        String forged = "\n12:00:00 INFO forged";
        PrintStream err = System.err;
        ByteArrayOutputStream copy = new ByteArrayOutputStream();
        System.setErr(new PrintStream(copy, true, StandardCharsets.UTF_8)); // slf4j-simple writes to it at each call
        try (ScriptedWorker refusing = ScriptedWorker.releasingWith(Status.FAILED_PRECONDITION.withDescription(forged));
             ScriptedWorker unknown = ScriptedWorker.releasingWith(Status.NOT_FOUND.withDescription(forged));
             WorkerResolver resolver = exactDrain(refusing.endpoint(), unknown.endpoint())) {
            resolver.awaitWorkers(2, WAIT);
            refusing.answer(ServingState.DRAINING, refusing.instanceId());
            unknown.answer(ServingState.DRAINING, unknown.instanceId());
            await().atMost(WAIT).until(() -> refusing.releases().size() == 1 && unknown.releases().size() == 1);
            await().atMost(WAIT).until(() -> copy.toString(StandardCharsets.UTF_8).split("INFO forged", -1).length == 3);
        } finally {
            System.setErr(err);
        }
        String log = copy.toString(StandardCharsets.UTF_8);
        err.print(log);
        assertThat(log).as("each refusal logged once, its text escaped").contains("\\n12:00:00 INFO forged")
                .doesNotContain(forged);
    }
}
