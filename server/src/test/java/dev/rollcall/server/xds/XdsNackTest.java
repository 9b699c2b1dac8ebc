package dev.rollcall.server.xds;

import static dev.rollcall.server.xds.AdsClient.EDS;
import static dev.rollcall.server.xds.AdsDoorFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.PeerText;
import dev.rollcall.testkit.ConsoleCapture;
import dev.rollcall.testkit.HostileText;
import dev.rollcall.worker.RollcallWorker;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import org.junit.jupiter.api.Test;

/**
 * A client that rejects a ClusterLoadAssignment keeps its last good one: the server logs the NACK
 * once, with the client's reason escaped, counts it, sends nothing on that stream until the next
 * publish (a client that rejects every copy would otherwise spin with the server), then sends that.
 */
class XdsNackTest {

    private static final String NACK_LINE = "rejected ClusterLoadAssignment version ";

    @Test
    void aNackOfTheFirstResponseIsLoggedOnceEscapedAndAnsweredByTheNextPublishOnly() throws Exception {
        nackThenPublish(false);
    }

    @Test
    void aNackAfterAnAcknowledgedVersionIsLoggedOnceEscapedAndAnsweredByTheNextPublishOnly() throws Exception {
        nackThenPublish(true);
    }

    /**
     * One worker listed; the client rejects a response (the first, or the one after a publish it
     * acknowledged the first of) twenty times with hostile text; then a second worker is listed.
     */
    private static void nackThenPublish(boolean ackFirst) throws Exception {
        try (ConsoleCapture console = new ConsoleCapture(); AdsDoorFleet fleet = AdsDoorFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            RollcallWorker b = fleet.worker("1.1.0");
            RollcallWorker c = fleet.worker("1.2.0");
            fleet.list(a);
            fleet.resolver.awaitWorkers(1, WAIT);
            String reason = HostileText.forging("xds-nack");
            DiscoveryResponse rejected;
            try (AdsClient ads = AdsClient.open(fleet.channel())) {
                ads.subscribe(EDS, "fleet");
                rejected = ads.next(EDS);
                String lastGood = "";
                if (ackFirst) {
                    lastGood = rejected.getVersionInfo();
                    ads.ack(rejected, "fleet");
                    fleet.list(a, b);
                    long two = fleet.resolver.await(s -> s.workers().size() == 2, WAIT).number();
                    rejected = untilNumber(ads, two);
                }
                for (int i = 0; i < 20; i++) {
                    ads.nack(rejected, lastGood, reason, "fleet");
                }

                fleet.list(a, b, c);
                long three = fleet.resolver.await(s -> s.workers().size() == 3, WAIT).number();
                DiscoveryResponse after = ads.next(EDS);
                assertThat(after.getVersionInfo()).as("the first response after the NACKs")
                        .isNotEqualTo(rejected.getVersionInfo());
                if (Versions.number(after.getVersionInfo()) < three) {
                    ads.ack(after, "fleet");
                    after = untilNumber(ads, three);
                }
                assertThat(after.getResources(0).unpack(ClusterLoadAssignment.class).getEndpoints(0)
                        .getLbEndpointsCount()).as("the next publish's endpoints").isEqualTo(3);
            }
            String log = console.text();
            assertThat(countOf(log, NACK_LINE)).as("NACK lines in\n" + log).isEqualTo(1);
            assertThat(log).contains(NACK_LINE + rejected.getVersionInfo() + " ")
                    .contains(PeerText.escape(reason, 1024));
            assertThat(HostileText.rawInLog(log)).isEmpty();
            assertThat(fleet.nacks()).isEqualTo(1.0);
        }
    }

    /** Acknowledges every EDS response until one says snapshot {@code number} or later; that one. */
    static DiscoveryResponse untilNumber(AdsClient ads, long number) throws InterruptedException {
        DiscoveryResponse r = ads.next(EDS);
        while (Versions.number(r.getVersionInfo()) < number) {
            ads.ack(r, "fleet");
            r = ads.next(EDS);
        }
        return r;
    }

    private static int countOf(String text, String what) {
        int n = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1)) {
            n++;
        }
        return n;
    }
}
