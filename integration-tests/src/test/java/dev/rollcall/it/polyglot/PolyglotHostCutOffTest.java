package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.polyglot.ReferenceWorker.Language;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.faults.FaultProxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Node and the Python worker keep the heartbeats they grant, and so a coordinator notices when
 * their hosts are cut off (no FIN, no RST: the fault proxy's blackhole): with a 1 s heartbeat a
 * worker that did not repeat its answer would be taken out within 1.5 s, so staying in for longer
 * shows that it does, and a cut then takes it out within that bound; with default settings, within
 * the 10 s a resolver promises (5 s heartbeat + 3 s keepalive-timeout + a 1 s sweep, as in
 * it/faults/HostCutOffTest). Both come back once the network heals.
 */
class PolyglotHostCutOffTest {

    private static final Logger log = LoggerFactory.getLogger(PolyglotHostCutOffTest.class);
    /** The promise with defaults is 10 s; the margin is HostCutOffTest's. */
    private static final Duration HEARTBEAT_BOUND = Duration.ofSeconds(12);
    private static final Duration WAIT = Duration.ofSeconds(40);

    @AutoClose
    private final Closer closer = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    @Test
    void theyKeepAOneSecondHeartbeatAndAreOutWithinItsBoundWhenTheirHostsAreCutOff() throws Exception {
        ReferenceWorker node = closer.add(ReferenceWorker.start(Language.NODE, "1.0.0"));
        ReferenceWorker python = closer.add(ReferenceWorker.start(Language.PYTHON, "1.0.0"));
        FaultProxy toNode = closer.add(FaultProxy.to(node.endpoint()));
        FaultProxy toPython = closer.add(FaultProxy.to(python.endpoint()));
        // Silent for more than 1 s (the heartbeat) + 0.5 s (keepalive-timeout): out.
        WorkerResolver r = closer.add(WorkerResolver.builder().discovery(discovery).policy(SemverRangePolicy.of("^1.0"))
                .keepalive(Duration.ofSeconds(1), Duration.ofMillis(500)).build());
        discovery.push(List.of(toNode.endpoint(), toPython.endpoint()));
        r.awaitWorkers(2, WAIT);
        long probes = r.probesSent();

        await("both stay in for 2.5 s without a probe: their heartbeats keep their streams alive")
                .during(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(4)).pollInterval(Duration.ofMillis(20))
                .until(() -> r.workers().size() == 2 && r.probesSent() == probes);
        for (ReferenceWorker w : List.of(node, python)) {
            assertThat(w.printed(line -> line.contains("heartbeat 1000 ms granted (asked 1000)"))).as("%s", w).isTrue();
        }

        toNode.blackhole();
        toPython.blackhole();
        long cut = System.nanoTime();
        await("both out within 3 s of the cut").atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(20))
                .until(() -> r.workers().isEmpty());
        log.info("MEASURED host cut off -> out of workers() with a 1 s heartbeat: {} ms",
                Duration.ofNanos(System.nanoTime() - cut).toMillis());
        toNode.pass();
        toPython.pass();
        await().atMost(WAIT).until(() -> r.workers().size() == 2);
    }

    @Test
    void withDefaultSettingsTheyAreOutWithinTenSecondsOfACutAndBackWhenTheNetworkHeals() throws Exception {
        ReferenceWorker node = closer.add(ReferenceWorker.start(Language.NODE, "1.0.0"));
        ReferenceWorker python = closer.add(ReferenceWorker.start(Language.PYTHON, "1.0.0"));
        FaultProxy toNode = closer.add(FaultProxy.to(node.endpoint()));
        FaultProxy toPython = closer.add(FaultProxy.to(python.endpoint()));
        WorkerResolver r = closer.add(WorkerResolver.builder().discovery(discovery).policy(SemverRangePolicy.of("^1.0"))
                .build());
        discovery.push(List.of(toNode.endpoint(), toPython.endpoint()));
        r.awaitWorkers(2, WAIT);

        toNode.blackhole();
        toPython.blackhole();
        long cut = System.nanoTime();
        Map<WorkerEndpoint, Long> outAfter = new ConcurrentHashMap<>();
        List<WorkerEndpoint> both = List.of(toNode.endpoint(), toPython.endpoint());
        await().atMost(HEARTBEAT_BOUND).pollInterval(Duration.ofMillis(20)).until(() -> {
            for (WorkerEndpoint e : both) {
                if (r.workers().stream().noneMatch(w -> w.endpoint().equals(e))) {
                    outAfter.putIfAbsent(e, System.nanoTime() - cut);
                }
            }
            return outAfter.size() == 2;
        });
        log.info("MEASURED host cut off -> out of workers(): node {} ms, python {} ms",
                outAfter.get(toNode.endpoint()) / 1_000_000, outAfter.get(toPython.endpoint()) / 1_000_000);
        for (WorkerEndpoint e : both) {
            assertThat(r.pin().status(e.url()).orElseThrow().reason()).as("%s", e)
                    .contains("its WatchWorkerInfo stream went silent: nothing within its 5000 ms heartbeat");
        }

        toNode.pass();
        toPython.pass();
        await().atMost(WAIT).until(() -> r.workers().size() == 2);
        for (WorkerEndpoint e : both) {
            assertThat(r.pin().status(e.url()).orElseThrow().state()).isEqualTo(State.COMPATIBLE);
        }
    }
}
