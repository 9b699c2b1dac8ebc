package dev.rollcall.server.xds;

import static dev.rollcall.server.xds.AdsClient.EDS;
import static dev.rollcall.server.xds.AdsDoorFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.worker.RollcallWorker;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A worker that flips between serving and draining as fast as it can: an xDS client sees the
 * endpoints versions only in increasing order, and once the flapping stops its last version is the
 * resolver's last snapshot, endpoint for endpoint.
 */
class XdsFlappingWorkerTest {

    private static final int FLIPS = 500;

    @Test
    void aFlappingWorkerGivesStrictlyIncreasingVersionsEndingAtTheResolversLastSnapshot() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start()) {
            RollcallWorker flapping = fleet.worker("1.0.0", "zone", "a");
            RollcallWorker steady = fleet.worker("1.1.0", "zone", "b");
            RollcallWorker rejected = fleet.worker("2.0.0", "zone", "a");
            fleet.list(flapping, steady, rejected);
            fleet.resolver.awaitSettled(WAIT);
            try (AdsClient ads = AdsClient.open(fleet.channel())) {
                ads.ackEverything("fleet");
                ads.subscribe(EDS, "fleet");
                CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < FLIPS; i++) {
                        flapping.drain();
                        flapping.resume();
                    }
                }).get(WAIT.toSeconds() * 3, java.util.concurrent.TimeUnit.SECONDS);

                List<DiscoveryResponse> received = new ArrayList<>();
                await().atMost(WAIT).untilAsserted(() -> {
                    ads.responses.drainTo(received);
                    assertThat(received).isNotEmpty();
                    FleetSnapshot last = fleet.resolver.pin();
                    DiscoveryResponse latest = received.get(received.size() - 1);
                    assertThat(Versions.number(latest.getVersionInfo())).isEqualTo(last.number());
                    assertThat(healthByAddress(latest)).isEqualTo(expected(last));
                });
                long previous = -1;
                for (DiscoveryResponse r : received) {
                    long number = Versions.number(r.getVersionInfo());
                    assertThat(number).as("versions in the order received").isGreaterThan(previous);
                    previous = number;
                }
                assertThat(received.size()).as("versions received").isGreaterThan(1);
            }
        }
    }

    /** Each endpoint of a ClusterLoadAssignment response, {@code host:port}, with its health. */
    private static Map<String, HealthStatus> healthByAddress(DiscoveryResponse response) throws Exception {
        Map<String, HealthStatus> health = new HashMap<>();
        ClusterLoadAssignment cla = response.getResources(0).unpack(ClusterLoadAssignment.class);
        for (LocalityLbEndpoints locality : cla.getEndpointsList()) {
            for (LbEndpoint e : locality.getLbEndpointsList()) {
                var address = e.getEndpoint().getAddress().getSocketAddress();
                health.put(address.getAddress() + ":" + address.getPortValue(), e.getHealthStatus());
            }
        }
        return health;
    }

    /** What a snapshot says in xDS: compatible workers healthy, draining ones draining, no other. */
    private static Map<String, HealthStatus> expected(FleetSnapshot snapshot) {
        Map<String, HealthStatus> health = new HashMap<>();
        for (WorkerStatus s : snapshot.statuses()) {
            String address = s.endpoint().host() + ":" + s.endpoint().port();
            if (s.state() == WorkerStatus.State.COMPATIBLE) {
                health.put(address, HealthStatus.HEALTHY);
            } else if (s.state() == WorkerStatus.State.DRAINING) {
                health.put(address, HealthStatus.DRAINING);
            }
        }
        return health;
    }
}
