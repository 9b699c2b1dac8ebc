package dev.rollcall.server.xds;

import static dev.rollcall.server.xds.AdsClient.EDS;
import static dev.rollcall.server.xds.AdsDoorFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.testkit.faults.FaultProxy;
import dev.rollcall.worker.RollcallWorker;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Clients that do not read cost the server a bounded amount and no other client anything: a liar
 * that reads nothing while it keeps sending requests with guessed nonces is ended with
 * {@code RESOURCE_EXHAUSTED}; a client whose connection goes silent with its socket open holds at
 * most one answer; meanwhile the other clients get every publish.
 */
class XdsSlowClientsTest {

    /** Requests the liar may send: far more than its flow-control window and the server's buffer hold in answers. */
    private static final int MAX_LIES = 100_000;

    @Test
    void aClientThatReadsNothingButKeepsRequestingIsEndedWhileOthersGetEveryPublish() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            RollcallWorker b = fleet.worker("1.1.0");
            RollcallWorker c = fleet.worker("1.2.0");
            fleet.list(a, b, c);
            fleet.resolver.awaitWorkers(3, WAIT);
            try (AdsClient honest = AdsClient.open(fleet.channel());
                 AdsClient liar = AdsClient.unread(fleet.channel(fleet.port(),
                         builder -> builder.flowControlWindow(64 * 1024)))) {
                honest.subscribe(EDS, "fleet");
                honest.ack(honest.next(EDS), "fleet");

                // The server numbers its answers on a stream 0, 1, 2, ...: a request naming the
                // last one's nonce asks for a new answer, whether the client read it or not.
                liar.subscribe(EDS, "fleet");
                int lies = 0;
                while (fleet.slowReadersEnded() == 0) {
                    assertThat(lies).as("requests sent before the guard ended the stream").isLessThan(MAX_LIES);
                    liar.send(liar.request(EDS, "", Integer.toString(lies++), "fleet"));
                    if (lies % 100 == 0) {
                        // Lets the server read what was sent before sending more: the client's own
                        // buffer is not what this test is about.
                        await().atMost(WAIT).until(() -> liar.isReady() || fleet.slowReadersEnded() > 0);
                    }
                }

                a.drain();
                long drained = fleet.resolver.await(s -> stateOf(s, a) == WorkerStatus.State.DRAINING, WAIT).number();
                DiscoveryResponse seen = XdsNackTest.untilNumber(honest, drained);
                assertThat(Versions.number(seen.getVersionInfo())).isEqualTo(drained);
                honest.ack(seen, "fleet");
                a.resume();
                long resumed = fleet.resolver.await(s -> stateOf(s, a) == WorkerStatus.State.COMPATIBLE
                        && s.number() > drained, WAIT).number();
                DiscoveryResponse latest = XdsNackTest.untilNumber(honest, resumed);
                assertThat(Versions.number(latest.getVersionInfo())).isEqualTo(resumed);

                liar.readAll();
                Status ended = liar.awaitEnd();
                assertThat(ended.getCode()).as(ended.toString()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(ended.getDescription()).contains("unread");
                assertThat(liar.responses.size()).as("answers the liar got for " + lies + " requests")
                        .isLessThan(lies);
                assertThat(honest.ended).as("the honest stream goes on").isNotDone();
            }
        }
    }

    @Test
    void aClientSilentWithItsSocketOpenDelaysNoOtherClientAndCatchesUpWhenItHears() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            RollcallWorker b = fleet.worker("1.1.0");
            fleet.list(a, b);
            fleet.resolver.awaitWorkers(2, WAIT);
            try (FaultProxy proxy = FaultProxy.to(fleet.port());
                 AdsClient frozen = AdsClient.open(fleet.channel(proxy.port(), UnaryOperator.identity()));
                 AdsClient honest = AdsClient.open(fleet.channel())) {
                frozen.subscribe(EDS, "fleet");
                frozen.ack(frozen.next(EDS), "fleet");
                honest.subscribe(EDS, "fleet");
                honest.ack(honest.next(EDS), "fleet");

                proxy.blackhole();
                long last = 0;
                for (int i = 0; i < 3; i++) {
                    a.drain();
                    long drained = fleet.resolver.await(s -> stateOf(s, a) == WorkerStatus.State.DRAINING, WAIT)
                            .number();
                    honest.ack(XdsNackTest.untilNumber(honest, drained), "fleet");
                    a.resume();
                    last = fleet.resolver.await(s -> stateOf(s, a) == WorkerStatus.State.COMPATIBLE
                            && s.number() > drained, WAIT).number();
                    honest.ack(XdsNackTest.untilNumber(honest, last), "fleet");
                }

                proxy.pass();
                assertThat(Versions.number(XdsNackTest.untilNumber(frozen, last).getVersionInfo()))
                        .as("the silent client, heard again").isEqualTo(last);
            }
        }
    }

    static WorkerStatus.State stateOf(dev.rollcall.api.registry.FleetSnapshot snapshot, RollcallWorker worker) {
        return snapshot.statuses().stream().filter(s -> s.endpoint().equals(worker.endpoint()))
                .map(WorkerStatus::state).findFirst().orElse(null);
    }
}
