package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.it.polyglot.XdsClientProcess.Call;
import dev.rollcall.it.polyglot.XdsClientProcess.Client;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.Closer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code rollcall serve}, the xDS control plane, stops (SIGTERM) and comes back on the same port
 * while a Node ({@code @grpc/grpc-js-xds}) and a Python (grpcio 1.51) xDS client call the fleet: while
 * it is down both keep calling the workers it last published, every call answered; the fleet changes
 * meanwhile (one worker drains, one joins), and once it is back both follow the change.
 */
class XdsClientsServeRestartTest {

    private static final Logger log = LoggerFactory.getLogger(XdsClientsServeRestartTest.class);
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int RUN = 60;
    private static final int INTERVAL_MS = 20;

    @AutoClose
    private final Closer closer = new Closer();
    @TempDir
    Path dir;

    private RollcallServeProcess serve(Path config, Path workers, WorkerFleet fleet, int port) throws Exception {
        Files.write(workers, fleet.endpoints().stream().map(WorkerEndpoint::url).toList());
        return closer.add(RollcallServeProcess.start(config, List.of("rollcall.discovery.type=static",
                "rollcall.discovery.static.file=" + workers, "rollcall.policy.type=semver",
                "rollcall.policy.semver.range=^1.0"), port));
    }

    private static Set<String> answeredBy(List<Call> calls) {
        return calls.stream().filter(Call::answered).map(Call::instanceId).collect(Collectors.toSet());
    }

    @Test
    void nodeAndPythonKeepCallingTheLastGoodWorkersWhileServeIsDownAndFollowTheFleetOnceItIsBack() throws Exception {
        WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0", "1.0.0", "1.1.0"));
        Path workers = dir.resolve("workers.txt");
        RollcallServeProcess first = serve(dir.resolve("first.properties"), workers, fleet, 0);
        int port = first.grpcAddress().getPort();
        List<XdsClientProcess> clients = List.of(
                closer.add(XdsClientProcess.start(Client.NODE, first.grpcAddress(), dir, INTERVAL_MS)),
                closer.add(XdsClientProcess.start(Client.PYTHON, first.grpcAddress(), dir, INTERVAL_MS)));
        Set<String> published = fleet.workers().stream().map(FleetWorker::instanceId).collect(Collectors.toSet());
        for (XdsClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(answeredBy(c.calls())).as("%s", c.transcript(20))
                    .containsAll(published));
        }

        assertThat(first.stop(WAIT)).as("rollcall serve's exit code after SIGTERM:%n%s", first.output()).isZero();
        long downAt = System.nanoTime();
        for (XdsClientProcess c : clients) {
            int stopped = c.calls().size();
            await().atMost(WAIT).until(() -> c.calls().size() >= stopped + 2 * RUN);
        }
        for (XdsClientProcess c : clients) {
            List<Call> whileDown = c.callsAfter(downAt);
            assertThat(whileDown).as("every call answered by the workers last published: %s", c.transcript(40))
                    .allSatisfy(call -> assertThat(call.answered()).isTrue())
                    .allSatisfy(call -> assertThat(published).contains(call.instanceId()));
            log.info("MEASURED {}: {} calls while rollcall serve was down, all on the {} workers it last published",
                    c, whileDown.size(), published.size());
        }

        // The fleet changes while no control plane watches: one worker drains, one joins.
        FleetWorker drained = fleet.worker(2);
        drained.drain();
        FleetWorker joined = fleet.addWorker("1.1.0");
        RollcallServeProcess second = serve(dir.resolve("second.properties"), workers, fleet, port);
        long backAt = System.nanoTime();
        assertThat(second.grpcAddress().getPort()).isEqualTo(port);
        for (XdsClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(answeredBy(c.callsAfter(backAt)))
                    .as("the joined worker takes calls: %s", c.transcript(20)).contains(joined.instanceId()));
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.trailingCallsNotOn(drained.instanceId()))
                    .as("the drained worker left: %s", c.transcript(20)).isGreaterThanOrEqualTo(RUN));
            int settled = c.calls().size() - RUN;
            await().atMost(WAIT).until(() -> c.calls().size() >= settled + 2 * RUN);
            List<Call> after = c.calls().subList(settled, c.calls().size());
            assertThat(after).as("once it followed, only the three accepted workers: %s", c.transcript(40))
                    .allSatisfy(call -> assertThat(Set.of(fleet.worker(0).instanceId(), fleet.worker(1).instanceId(),
                            joined.instanceId())).contains(call.instanceId()));
            assertThat(answeredBy(after)).as("the joined worker among them: %s", c.transcript(40))
                    .contains(joined.instanceId());
            long firstOnJoined = c.callsAfter(backAt).stream().filter(call -> joined.instanceId().equals(call.instanceId()))
                    .findFirst().orElseThrow().readAtNanos();
            log.info("MEASURED {}: rollcall serve listening again -> the first call on the worker that joined while it"
                    + " was down: {} ms (calls every {} ms)", c, (firstOnJoined - backAt) / 1_000_000, INTERVAL_MS);
        }
    }
}
