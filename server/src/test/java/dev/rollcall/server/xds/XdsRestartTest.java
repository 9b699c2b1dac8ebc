package dev.rollcall.server.xds;

import static dev.rollcall.server.xds.AdsClient.EDS;
import static dev.rollcall.server.xds.AdsDoorFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.server.FleetServer;
import dev.rollcall.worker.RollcallWorker;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A server's successor on the same port: a client that reconnects with the version it had gets the
 * successor's resources, even when the successor's snapshot number is the one the client claims;
 * and closing a server ends its ADS streams rather than leaving them hanging.
 */
class XdsRestartTest {

    @Test
    void aClientReconnectingWithTheOldServersVersionGetsTheSuccessorsEvenWhenTheNumbersCollide() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            fleet.list(a);
            fleet.resolver.awaitWorkers(1, WAIT);
            int port = fleet.port();
            String oldInstance = fleet.server.instanceId();
            ManagedChannel channel = fleet.channel();
            DiscoveryResponse had;
            try (AdsClient before = AdsClient.open(channel)) {
                before.subscribe(EDS, "fleet");
                had = before.next(EDS);
                before.ack(had, "fleet");
                fleet.server.close();
                assertThat(before.awaitEnd().getCode()).as("the old server's stream ends")
                        .isIn(Status.Code.UNAVAILABLE, Status.Code.CANCELLED);
            }
            assertThat(Versions.instance(had.getVersionInfo())).isEqualTo(oldInstance);

            try (WorkerResolver resolver = WorkerResolver.builder().name("successor").discovery(fleet.discovery)
                    .policy(w -> Verdict.accept()).fetchSchemas(false).build();
                 FleetServer successor = FleetServer.builder(resolver).config(RollcallConfig.of(Map.of()))
                         .host("127.0.0.1").port(port).http(false).start()) {
                resolver.awaitWorkers(1, WAIT);
                assertThat(successor.instanceId()).isNotEqualTo(oldInstance);
                long current = resolver.pin().number();
                for (String claimed : new String[] {had.getVersionInfo(), current + "/" + oldInstance}) {
                    try (AdsClient after = AdsClient.open(channel)) {
                        after.send(after.request(EDS, claimed, "", "fleet"));
                        DiscoveryResponse r = after.next(EDS);
                        assertThat(Versions.instance(r.getVersionInfo())).as("answer to a client claiming " + claimed)
                                .isEqualTo(successor.instanceId());
                        assertThat(Versions.number(r.getVersionInfo())).isGreaterThanOrEqualTo(current);
                    }
                }
            }
        }
    }

    @Test
    void closingTheServerEndsEveryAdsStreamSoNoClientHangs() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start()) {
            java.util.List<AdsClient> streams = new java.util.ArrayList<>();
            for (int i = 0; i < 6; i++) {
                AdsClient ads = AdsClient.open(fleet.channel());
                ads.subscribe(AdsClient.CDS, "fleet");
                ads.next(AdsClient.CDS);
                if (i % 3 == 0) {
                    ads.subscribe(EDS, "fleet"); // a watch open when the server goes
                }
                streams.add(ads);
            }
            fleet.server.close();
            for (AdsClient ads : streams) {
                assertThat(ads.awaitEnd().getCode()).isIn(Status.Code.UNAVAILABLE, Status.Code.CANCELLED);
            }
        }
    }
}
