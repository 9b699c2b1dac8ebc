package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.it.polyglot.XdsClientProcess.Call;
import dev.rollcall.it.polyglot.XdsClientProcess.Client;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.FleetWorkerState;
import dev.rollcall.protocol.v1.GetFleetRequest;
import dev.rollcall.testkit.Closer;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Clients nobody here wrote follow Rollcall's verdicts over xDS: {@code @grpc/grpc-js-xds} in a Node
 * process and gRPC Python (Debian's grpcio 1.51) in a Python one, each dialling {@code xds:///fleet}
 * with the bootstrap docs/xds.md prints, against {@code rollcall serve} (a process of its own) whose
 * static fleet is real Java workers on loopback under {@code semver ^1.0}. The calls are
 * {@code WorkerInfo}, so each answer names the worker that took it.
 */
class XdsClientsFollowVerdictsTest {

    private static final Logger log = LoggerFactory.getLogger(XdsClientsFollowVerdictsTest.class);
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Calls in a row that must avoid a worker before the test takes a client to have let it go. */
    private static final int RUN = 60;
    private static final int INTERVAL_MS = 20;

    @AutoClose
    private final Closer closer = new Closer();
    @TempDir
    Path dir;

    private RollcallServeProcess serve(WorkerFleet fleet) throws Exception {
        Path workers = Files.write(dir.resolve("workers.txt"), fleet.endpoints().stream().map(WorkerEndpoint::url).toList());
        return closer.add(RollcallServeProcess.start(dir.resolve("rollcall.properties"),
                List.of("rollcall.discovery.type=static", "rollcall.discovery.static.file=" + workers,
                        "rollcall.policy.type=semver", "rollcall.policy.semver.range=^1.0"), 0));
    }

    /** Rollcall's own view, through the fleet API on the same port. */
    private FleetServiceGrpc.FleetServiceBlockingStub fleetApi(RollcallServeProcess serve) {
        ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", serve.grpcAddress().getPort())
                .usePlaintext().build();
        closer.add(channel::shutdownNow);
        return FleetServiceGrpc.newBlockingStub(channel);
    }

    private static void awaitFleet(FleetServiceGrpc.FleetServiceBlockingStub api, Predicate<FleetSnapshot> condition) {
        await().atMost(WAIT).until(() -> api.getFleet(GetFleetRequest.getDefaultInstance()), condition);
    }

    private static boolean lists(FleetSnapshot s, FleetWorker w) {
        return s.getWorkersList().stream().anyMatch(f -> f.getUrl().equals(w.endpoint().url())
                && f.getInstanceId().equals(w.instanceId()));
    }

    private static void awaitAnswersFrom(XdsClientProcess client, Set<String> instances) {
        await().atMost(WAIT).untilAsserted(() -> assertThat(client.calls().stream().filter(Call::answered)
                .map(Call::instanceId).collect(Collectors.toSet())).as("%s", client.transcript(20)).containsAll(instances));
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void callsReachOnlyTheCompatibleWorkersOfAMixedFleet(Client kind) throws Exception {
        WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0", "1.1.0", "2.0.0", "0.9.0"));
        RollcallServeProcess serve = serve(fleet);
        var api = fleetApi(serve);
        awaitFleet(api, s -> s.getWorkersCount() == 2 && s.getExcludedCount() == 2);

        XdsClientProcess client = closer.add(XdsClientProcess.start(kind, serve.grpcAddress(), dir, INTERVAL_MS));
        Set<String> compatible = Set.of(fleet.worker(0).instanceId(), fleet.worker(1).instanceId());
        awaitAnswersFrom(client, compatible);
        int seen = client.calls().size();
        await().atMost(WAIT).until(() -> client.calls().size() >= seen + 2 * RUN);

        List<Call> calls = client.calls();
        assertThat(calls).as("%s", client.transcript(20)).filteredOn(Call::answered)
                .extracting(Call::instanceId).allMatch(compatible::contains);
        assertThat(calls).extracting(Call::version).doesNotContain("2.0.0", "0.9.0");
        log.info("MEASURED {}: {} calls, all on the {} compatible workers", client, calls.size(), compatible.size());
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void afterADrainNoNewCallReachesTheDrainedWorker(Client kind) throws Exception {
        WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0", "1.0.0", "1.1.0"));
        RollcallServeProcess serve = serve(fleet);
        var api = fleetApi(serve);
        awaitFleet(api, s -> s.getWorkersCount() == 3);
        XdsClientProcess client = closer.add(XdsClientProcess.start(kind, serve.grpcAddress(), dir, INTERVAL_MS));
        FleetWorker drained = fleet.worker(2);
        String instance = drained.instanceId();
        awaitAnswersFrom(client, Set.of(fleet.worker(0).instanceId(), fleet.worker(1).instanceId(), instance));

        long drainedAt = System.nanoTime();
        drained.drain();
        await().atMost(WAIT).untilAsserted(() -> assertThat(client.trailingCallsNotOn(instance))
                .as("%d calls in a row that the drained worker did not take: %s", RUN, client.transcript(20))
                .isGreaterThanOrEqualTo(RUN));
        int settled = client.calls().size() - RUN;
        await().atMost(WAIT).until(() -> client.calls().size() >= settled + 3 * RUN);

        List<Call> after = client.calls().subList(settled, client.calls().size());
        assertThat(after).as("no call on the drained worker once the client let it go: %s", client.transcript(40))
                .allSatisfy(c -> assertThat(c.instanceId()).isNotEqualTo(instance));
        assertThat(after).as("the others took the calls: %s", client.transcript(40)).allMatch(Call::answered);
        assertThat(drained.isRunning()).as("the drained worker still serves: only xDS kept calls away").isTrue();
        List<Call> onDrained = client.callsAfter(drainedAt).stream().filter(c -> instance.equals(c.instanceId())).toList();
        long lastMs = onDrained.isEmpty() ? 0 : (onDrained.get(onDrained.size() - 1).readAtNanos() - drainedAt) / 1_000_000;
        log.info("MEASURED {}: drain -> no new call on the drained worker: the last of {} calls it took after drain()"
                + " was read {} ms after drain() (calls every {} ms)", client, onDrained.size(), lastMs, INTERVAL_MS);
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void aRejectedSuccessorOnTheSameAddressGetsNoCall(Client kind) throws Exception {
        WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0", "1.0.0"));
        RollcallServeProcess serve = serve(fleet);
        var api = fleetApi(serve);
        awaitFleet(api, s -> s.getWorkersCount() == 2);
        XdsClientProcess client = closer.add(XdsClientProcess.start(kind, serve.grpcAddress(), dir, INTERVAL_MS));
        FleetWorker replaced = fleet.worker(1);
        String before = replaced.instanceId();
        awaitAnswersFrom(client, Set.of(fleet.worker(0).instanceId(), before));

        // In place: the 1.0.0 process stops and a 2.0.0 one serves on its port at once, before
        // Rollcall or the client could have heard of the stop.
        int restartedAt = client.calls().size();
        replaced.restart("2.0.0");
        String successor = replaced.instanceId();
        awaitFleet(api, s -> s.getExcludedList().stream().anyMatch(w -> w.getUrl().equals(replaced.endpoint().url())
                && w.getInstanceId().equals(successor) && w.getState() == FleetWorkerState.FLEET_WORKER_STATE_REJECTED));
        int rejectedAt = client.calls().size();
        await().atMost(WAIT).until(() -> client.calls().size() >= rejectedAt + 2 * RUN);

        assertThat(client.calls()).as("the rejected successor took no call: %s", client.transcript(40))
                .noneMatch(c -> successor.equals(c.instanceId()) || "2.0.0".equals(c.version()));
        assertThat(client.calls().subList(rejectedAt, client.calls().size()))
                .as("the other worker took every call: %s", client.transcript(40))
                .allMatch(c -> fleet.worker(0).instanceId().equals(c.instanceId()));
        assertThat(lists(api.getFleet(GetFleetRequest.getDefaultInstance()), replaced)).isFalse();
        log.info("MEASURED {}: {} calls after the restart in place, none on the rejected successor",
                client, client.calls().size() - restartedAt);
    }
}
