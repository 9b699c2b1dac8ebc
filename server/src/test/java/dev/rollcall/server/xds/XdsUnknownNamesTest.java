package dev.rollcall.server.xds;

import static dev.rollcall.server.xds.AdsClient.EDS;
import static dev.rollcall.server.xds.AdsClient.LDS;
import static dev.rollcall.server.xds.AdsDoorFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.worker.RollcallWorker;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A name the fleet does not have is answered as xDS answers it: at once, with the resources of the
 * request that exist (a Listener or Cluster left out of the answer does not exist), and the stream
 * goes on. A gRPC channel dialling an unknown name fails its calls {@code UNAVAILABLE}, naming it.
 */
class XdsUnknownNamesTest {

    @Test
    void unknownNamesAreAnsweredAtOnceWithTheResourcesThatExistAndTheStreamKeepsGettingEndpoints() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            RollcallWorker b = fleet.worker("1.1.0");
            fleet.list(a);
            fleet.resolver.awaitWorkers(1, WAIT);
            try (AdsClient ads = AdsClient.open(fleet.channel()); AdsClient none = AdsClient.open(fleet.channel())) {
                ads.subscribe(LDS, "fleet", "nosuch");
                DiscoveryResponse listeners = ads.next(LDS);
                assertThat(listeners.getResourcesList()).hasSize(1);
                assertThat(listeners.getResources(0).unpack(Listener.class).getName()).isEqualTo("fleet");
                ads.ack(listeners, "fleet", "nosuch");

                none.subscribe(LDS, "nosuch");
                assertThat(none.next(LDS).getResourcesList()).as("the answer to [nosuch]").isEmpty();

                ads.subscribe(EDS, "fleet");
                DiscoveryResponse endpoints = ads.next(EDS);
                ads.ack(endpoints, "fleet");
                fleet.list(a, b);
                long two = fleet.resolver.await(s -> s.workers().size() == 2, WAIT).number();
                endpoints = XdsNackTest.untilNumber(ads, two);
                assertThat(endpoints.getResources(0).unpack(ClusterLoadAssignment.class).getEndpoints(0)
                        .getLbEndpointsCount()).isEqualTo(2);
                ads.ack(endpoints, "fleet");

                // The same version and nonce, one more name: a subscription change, answered at once.
                ads.send(ads.request(LDS, listeners.getVersionInfo(), listeners.getNonce(), "fleet", "nosuch", "other"));
                DiscoveryResponse again = ads.next(LDS);
                assertThat(again.getResourcesList()).hasSize(1);
                assertThat(again.getResources(0).unpack(Listener.class).getName()).isEqualTo("fleet");
                assertThat(ads.ended).as("the stream goes on").isNotDone();
                assertThat(none.ended).as("the stream goes on").isNotDone();
            }
        }
    }

    @Test
    void aGrpcChannelDiallingAnUnknownNameFailsItsCallsUnavailableNamingIt() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start()) {
            RollcallWorker a = fleet.worker("1.0.0");
            fleet.list(a);
            fleet.resolver.awaitWorkers(1, WAIT);
            try (GrpcXdsClient client = GrpcXdsClient.dial(fleet.port(), "nosuch")) {
                // grpc-java (1.85) concludes absence only when its does-not-exist timer (15 s) fires,
                // whatever the server answered at once (XdsClientImpl.ResourceSubscriber.onAbsent
                // returns while that timer is pending), so the deadline leaves room for it.
                StatusRuntimeException failed = catchThrowableOfType(() -> WorkerServiceGrpc
                        .newBlockingStub(client.channel()).withDeadlineAfter(45, TimeUnit.SECONDS)
                        .workerInfo(WorkerInfoRequest.getDefaultInstance()), StatusRuntimeException.class);
                assertThat(failed).as("the call fails").isNotNull();
                assertThat(failed.getStatus().getCode()).as(failed.getStatus().toString())
                        .isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(failed.getStatus().getDescription()).contains("nosuch");
            }
        }
    }
}
