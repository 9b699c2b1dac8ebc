package dev.rollcall.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.faults.FaultProxy;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's host cut off: packets dropped, no FIN, no RST (power loss, a partition, a proxy that
 * stops forwarding), made by the fault proxy between a resolver with default settings and a real
 * gRPC worker on loopback. The worker must be out of new snapshots within the documented bound,
 * shown unreachable with a reason that says what happened, and back once the network heals.
 */
class HostCutOffTest {

    private static final Logger log = LoggerFactory.getLogger(HostCutOffTest.class);
    /** The promise with defaults: 10 s (keepalive-time 5 s + keepalive-timeout 3 s + a 1 s sweep), and a margin. */
    private static final Duration HEARTBEAT_BOUND = Duration.ofSeconds(12);
    /**
     * Without heartbeats, HTTP/2 keepalive: a ping after max(10 s, keepalive-time) without a frame,
     * dropped after keepalive-timeout; 13 s, and a margin.
     */
    private static final Duration HTTP2_BOUND = Duration.ofSeconds(15);
    private static final Duration WAIT = Duration.ofSeconds(40);

    @AutoClose
    private final Closer closeables = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    private <T extends AutoCloseable> T closing(T c) {
        return closeables.add(c);
    }

    /** A resolver with every default but the backend and the policy. */
    private WorkerResolver resolverWithDefaults() {
        return closing(WorkerResolver.builder().discovery(discovery).policy(SemverRangePolicy.of("^1.0")).build());
    }

    private static WorkerStatus status(WorkerResolver r, WorkerEndpoint e) {
        return r.pin().status(e.url()).orElseThrow();
    }


    @Test
    void aWorkerWhoseHostIsCutOffIsOutWithinTenSecondsUnreachableWithTheReasonAndBackWhenItHeals() throws Exception {
        HeartbeatWorker worker = closing(HeartbeatWorker.start("1.0.0", HeartbeatWorker.Kind.GRANTS_HEARTBEATS));
        FaultProxy proxy = closing(FaultProxy.to(worker.endpoint()));
        WorkerResolver r = resolverWithDefaults();
        discovery.push(List.of(proxy.endpoint()));
        r.awaitWorkers(1, WAIT);
        assertThat(worker.askedHeartbeatMillis()).as("keepalive-time, asked over the stream").isEqualTo(5_000);

        proxy.blackhole();
        long cut = System.nanoTime();
        await().atMost(HEARTBEAT_BOUND).pollInterval(Duration.ofMillis(20)).until(() -> r.workers().isEmpty());
        log.info("MEASURED host cut off -> out of workers() (stream heartbeats): {} ms",
                Duration.ofNanos(System.nanoTime() - cut).toMillis());

        await().atMost(WAIT).until(() -> status(r, proxy.endpoint()).state() == State.UNREACHABLE);
        assertThat(status(r, proxy.endpoint()).reason())
                .startsWith("DEADLINE_EXCEEDED: no answer within 2000 ms")
                .contains("after its WatchWorkerInfo stream went silent: nothing within its 5000 ms heartbeat + 3000 ms"
                        + " (rollcall.probe.keepalive-timeout)");

        proxy.pass();
        await().atMost(WAIT).until(() -> r.workers().size() == 1);
        assertThat(status(r, proxy.endpoint()).state()).isEqualTo(State.COMPATIBLE);
    }

    @Test
    void workersThatGrantNoHeartbeatsAreNoticedByHttp2KeepaliveOnTheKeptConnection() throws Exception {
        // A RollcallWorker grants heartbeats once the worker side does (then the 10 s bound holds for
        // it); before that, and for any worker that grants none or serves only the unary call (no
        // stream at all: the ping goes without calls), HTTP/2 keepalive is what notices.
        RollcallWorker rollcall = closing(RollcallWorker.builder().version("1.0.0").start());
        HeartbeatWorker unaryOnly = closing(HeartbeatWorker.start("1.0.0", HeartbeatWorker.Kind.UNARY_ONLY));
        FaultProxy toRollcall = closing(FaultProxy.to(rollcall.endpoint()));
        FaultProxy toUnaryOnly = closing(FaultProxy.to(unaryOnly.endpoint()));
        WorkerResolver r = resolverWithDefaults();
        discovery.push(List.of(toRollcall.endpoint(), toUnaryOnly.endpoint()));
        r.awaitWorkers(2, WAIT);

        toRollcall.blackhole();
        toUnaryOnly.blackhole();
        long cut = System.nanoTime();
        List<WorkerEndpoint> both = List.of(toRollcall.endpoint(), toUnaryOnly.endpoint());
        for (WorkerEndpoint e : both) {
            await().atMost(HTTP2_BOUND.minusNanos(System.nanoTime() - cut)).pollInterval(Duration.ofMillis(20))
                    .until(() -> r.workers().stream().noneMatch(w -> w.endpoint().equals(e)));
            log.info("MEASURED host cut off -> out of workers() ({}): {} ms",
                    e.equals(toRollcall.endpoint()) ? "RollcallWorker" : "unary-only worker, HTTP/2 keepalive",
                    Duration.ofNanos(System.nanoTime() - cut).toMillis());
        }

        for (WorkerEndpoint e : both) {
            await().atMost(WAIT).until(() -> status(r, e).state() == State.UNREACHABLE);
            assertThat(status(r, e).reason()).startsWith("DEADLINE_EXCEEDED: no answer within 2000 ms (after its");
        }
        toRollcall.pass();
        toUnaryOnly.pass();
        await().atMost(WAIT).until(() -> r.workers().size() == 2);
    }
}
