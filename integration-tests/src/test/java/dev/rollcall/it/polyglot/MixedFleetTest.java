package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.polyglot.ReferenceWorker.Language;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.local.WorkerFleet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * One resolver, one fleet of workers in three languages: the Java {@code RollcallWorker} and the
 * Node and Python reference workers, written from the .proto and docs/protocol.md alone. The policy
 * judges them all the same way; nothing in the resolver knows which language answered.
 */
class MixedFleetTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @AutoClose
    private final Closer closer = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    @Test
    void aResolverConvergesOnJavaNodeAndPythonWorkersAndThePolicyRejectsOneOfEach() throws Exception {
        WorkerFleet java = closer.add(WorkerFleet.start("1.0.0", "2.0.0"));
        ReferenceWorker node = closer.add(ReferenceWorker.start(Language.NODE, "1.1.0", "--label", "lang=node",
                "--service", "demo.v1.Orders=internal"));
        ReferenceWorker oldNode = closer.add(ReferenceWorker.start(Language.NODE, "2.1.0"));
        ReferenceWorker python = closer.add(ReferenceWorker.start(Language.PYTHON, "1.2.0", "--label", "lang=python",
                "--service", "demo.v1.Orders=external"));
        ReferenceWorker oldPython = closer.add(ReferenceWorker.start(Language.PYTHON, "2.2.0"));
        WorkerResolver r = closer.add(WorkerResolver.builder().discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0")).build()); // schemas fetched too: neither serves reflection
        discovery.push(List.of(java.worker(0).endpoint(), java.worker(1).endpoint(), node.endpoint(),
                oldNode.endpoint(), python.endpoint(), oldPython.endpoint()));

        FleetSnapshot s = r.await(snap -> snap.counts().candidates() == 6 && snap.counts().pending() == 0, WAIT);

        assertThat(s.compatibleEndpoints()).as("%s", s.statuses())
                .containsExactlyInAnyOrder(java.worker(0).endpoint(), node.endpoint(), python.endpoint());
        for (WorkerEndpoint rejected : List.of(java.worker(1).endpoint(), oldNode.endpoint(), oldPython.endpoint())) {
            WorkerStatus status = s.status(rejected.url()).orElseThrow();
            assertThat(status.state()).as("%s", status).isEqualTo(State.REJECTED);
            assertThat(status.reason()).as("%s", status).contains("^1.0");
        }
        WorkerInfo fromNode = s.status(node.endpoint().url()).orElseThrow().info().orElseThrow();
        assertThat(fromNode.version()).isEqualTo("1.1.0");
        assertThat(fromNode.instanceId()).isEqualTo(node.instanceId());
        assertThat(fromNode.labels()).isEqualTo(Map.of("lang", "node"));
        assertThat(fromNode.services()).containsExactly(new ServiceInfo("demo.v1.Orders", Visibility.INTERNAL, List.of()));
        WorkerInfo fromPython = s.status(python.endpoint().url()).orElseThrow().info().orElseThrow();
        assertThat(fromPython.instanceId()).isEqualTo(python.instanceId());
        assertThat(fromPython.labels()).isEqualTo(Map.of("lang", "python"));
        assertThat(fromPython.services()).containsExactly(new ServiceInfo("demo.v1.Orders", Visibility.EXTERNAL, List.of()));

        // The probe was each worker's WatchWorkerInfo stream, with heartbeats at keepalive-time (5 s).
        // (Its log line was written before the answer, but our reader of its output may be behind.)
        for (ReferenceWorker w : List.of(node, oldNode, python, oldPython)) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(w.printed(
                    line -> line.contains("heartbeat 5000 ms granted (asked 5000)")))
                    .as("%s was watched; its output:%n%s", w, w.output()).isTrue());
        }
    }
}
