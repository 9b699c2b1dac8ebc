package dev.rollcall.core.protocols;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerProbe;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.datafusion.GetWorkerInfoRequest;
import dev.rollcall.protocol.datafusion.GetWorkerInfoResponse;
import dev.rollcall.protocol.datafusion.WorkerServiceGrpc;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code datafusion-distributed} against a grpc-java server serving its {@code worker.WorkerService}:
 * the answer is a version and nothing else, so a restart in place is seen only through the
 * connection dropping (the refresh interval is an hour: nothing else could notice it in time).
 */
class DatafusionProtocolTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    /** A datafusion-distributed worker of {@code version}: answers GetWorkerInfo, counts the calls. */
    private static WorkerServiceGrpc.WorkerServiceImplBase worker(String version, AtomicInteger calls) {
        return new WorkerServiceGrpc.WorkerServiceImplBase() {
            @Override
            public void getWorkerInfo(GetWorkerInfoRequest request, StreamObserver<GetWorkerInfoResponse> answer) {
                calls.incrementAndGet();
                answer.onNext(GetWorkerInfoResponse.newBuilder().setVersion(version).build());
                answer.onCompleted();
            }
        };
    }

    private static boolean is(FleetSnapshot s, WorkerEndpoint e, State state) {
        return s.status(e.url()).map(st -> st.state() == state).orElse(false);
    }

    @Test
    void verdictsFollowTheVersionsTheWorkersAnswer() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        HandedDiscovery discovery = new HandedDiscovery();
        try (HealthServer current = HealthServer.start(0, worker("0.9.0", calls));
             HealthServer older = HealthServer.start(0, worker("0.8.1", calls));
             WorkerResolver resolver = WorkerResolver.builder().name("datafusion-verdicts").discovery(discovery)
                     .policy(w -> w.version().equals("0.9.0") ? Verdict.accept() : Verdict.reject("not 0.9.0"))
                     // The liveness checks are GetWorkerInfo calls too: none within this test, whose count is of probes.
                     .keepalive(Duration.ofMinutes(10), Duration.ofSeconds(3))
                     .probeProtocol("datafusion-distributed").build()) {
            WorkerEndpoint a = WorkerEndpoint.of("127.0.0.1", current.port());
            WorkerEndpoint b = WorkerEndpoint.of("127.0.0.1", older.port());
            discovery.offer(a, b);
            FleetSnapshot s = resolver.await(x -> is(x, a, State.COMPATIBLE) && is(x, b, State.REJECTED), WAIT);
            assertThat(s.workers()).extracting(w -> w.version()).containsExactly("0.9.0");
            assertThat(s.workers().get(0).instanceId()).isEmpty();
            assertThat(calls.get()).isEqualTo(2);
            assertThat(resolver.probesSent()).isEqualTo(2);
        }
    }

    @Test
    void aRestartInPlaceWithAnotherVersionIsNoticedThroughTheConnectionDrop() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        HandedDiscovery discovery = new HandedDiscovery();
        HealthServer first = HealthServer.startBelowEphemeral(worker("0.9.0", calls)); // rebound below
        int port = first.port();
        WorkerEndpoint endpoint = WorkerEndpoint.of("127.0.0.1", port);
        try (WorkerResolver resolver = WorkerResolver.builder().name("datafusion-restart").discovery(discovery)
                .policy(w -> w.version().equals("0.9.0") ? Verdict.accept() : Verdict.reject("not 0.9.0"))
                .probeProtocol("datafusion-distributed").refreshInterval(Duration.ofHours(1))
                .backoff(Duration.ofMillis(50), Duration.ofMillis(200)).build()) {
            discovery.offer(endpoint);
            resolver.await(x -> is(x, endpoint, State.COMPATIBLE), WAIT);

            first.close(); // the process goes away with its connection...
            try (HealthServer successor = HealthServer.start(port, worker("0.10.0", calls))) {
                // ...and its successor, on the same port, answers another version: no instance id
                // says so, no refresh is due; only the dropped connection made the resolver ask again.
                FleetSnapshot s = resolver.await(x -> is(x, endpoint, State.REJECTED), WAIT);
                assertThat(s.status(endpoint.url()).orElseThrow().info().orElseThrow().version()).isEqualTo("0.10.0");
                assertThat(s.workers()).isEmpty();
            }
        } finally {
            first.close();
        }
    }

    @Test
    void aOneOffProbeSpeaksTheChosenProtocol() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        try (HealthServer server = HealthServer.start(0, worker("0.9.0", calls))) {
            ProbeOutcome o = WorkerProbe.builder().protocol("datafusion-distributed").build()
                    .probe(WorkerEndpoint.of("127.0.0.1", server.port()), Duration.ofSeconds(5)).join();
            assertThat(o).isInstanceOf(ProbeOutcome.Answered.class);
            assertThat(((ProbeOutcome.Answered) o).info().version()).isEqualTo("0.9.0");
        }
    }

    /**
     * A datafusion-distributed worker that never called {@code with_version()} (their default)
     * answers {@code ""}: that is its version, handed to the policy like any other, not a failure.
     */
    @Test
    void anAnswerWithoutAVersionIsTheEmptyVersionForThePolicyToJudge() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        HandedDiscovery discovery = new HandedDiscovery();
        try (HealthServer server = HealthServer.start(0, worker("", calls));
             WorkerResolver resolver = WorkerResolver.builder().name("datafusion-empty").discovery(discovery)
                     .policy(w -> w.version().isEmpty() ? Verdict.accept() : Verdict.reject("has a version"))
                     .probeProtocol("datafusion-distributed").build()) {
            WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", server.port());
            discovery.offer(e);
            FleetSnapshot s = resolver.await(x -> is(x, e, State.COMPATIBLE), WAIT);
            assertThat(s.workers()).extracting(w -> w.version()).containsExactly("");
        }
    }

    /** What {@code rollcall probe --protocol datafusion-distributed} sees: the same answer. */
    @Test
    void aOneOffProbeOfAWorkerWithoutAVersionAnswersTheEmptyVersion() throws Exception {
        try (HealthServer server = HealthServer.start(0, worker("", new AtomicInteger()))) {
            ProbeOutcome o = WorkerProbe.builder().protocol("datafusion-distributed").build()
                    .probe(WorkerEndpoint.of("127.0.0.1", server.port()), Duration.ofSeconds(5)).join();
            assertThat(o).isInstanceOfSatisfying(ProbeOutcome.Answered.class,
                    a -> assertThat(a.info().version()).isEmpty());
        }
    }
}
