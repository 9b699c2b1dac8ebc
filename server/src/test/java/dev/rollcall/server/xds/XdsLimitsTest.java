package dev.rollcall.server.xds;

import static dev.rollcall.server.xds.AdsClient.CDS;
import static dev.rollcall.server.xds.AdsClient.EDS;
import static dev.rollcall.server.xds.AdsClient.LDS;
import static dev.rollcall.server.xds.AdsDoorFleet.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.PeerText;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.GetFleetRequest;
import dev.rollcall.protocol.v1.HoldFleetRequest;
import dev.rollcall.testkit.ConsoleCapture;
import dev.rollcall.testkit.HostileText;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The ADS door's own limits: streams in all and per connection, resource names per stream, request
 * size, the types and methods it serves, and the door switched off; each refusal names the key (or
 * the item) and leaves the rest of the server serving.
 */
class XdsLimitsTest {

    private static void assertServed(AdsClient ads) throws InterruptedException {
        // The Listener: the fleet of these tests has no worker, so its Cluster is withdrawn.
        ads.subscribe(LDS, "fleet");
        assertThat(ads.next(LDS).getResourcesCount()).isEqualTo(1);
    }

    private static void assertRefused(AdsClient ads, Status.Code code, String naming) throws Exception {
        Status status = ads.awaitEnd();
        assertThat(status.getCode()).as(status.toString()).isEqualTo(code);
        assertThat(status.getDescription()).contains(naming);
    }

    @Test
    void streamsPastMaxStreamsAreRefusedNamingTheKeyAndAStreamThatEndsFreesItsPlace() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start(Map.of("rollcall.serve.xds.max-streams", "2"))) {
            AdsClient first = AdsClient.open(fleet.channel());
            assertServed(first);
            AdsClient second = AdsClient.open(fleet.channel());
            assertServed(second);
            AdsClient third = AdsClient.open(fleet.channel());
            third.subscribe(CDS, "fleet");
            assertRefused(third, Status.Code.RESOURCE_EXHAUSTED, "rollcall.serve.xds.max-streams=2");

            first.cancel();
            await().atMost(WAIT).until(() -> fleet.streams() == 1);
            AdsClient fourth = AdsClient.open(fleet.channel());
            assertServed(fourth);
            second.halfClose();
            assertThat(second.awaitEnd().getCode()).isEqualTo(Status.Code.OK);
            fourth.cancel();
            await().atMost(WAIT).until(() -> fleet.streams() == 0);
        }
    }

    @Test
    void streamsPastTheLimitPerConnectionAreRefusedNamingTheKeyWhileOtherConnectionsAreServed() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start(Map.of("rollcall.serve.xds.max-streams-per-connection", "2"))) {
            ManagedChannel one = fleet.channel();
            AdsClient a = AdsClient.open(one);
            assertServed(a);
            assertServed(AdsClient.open(one));
            AdsClient refused = AdsClient.open(one);
            refused.subscribe(CDS, "fleet");
            assertRefused(refused, Status.Code.RESOURCE_EXHAUSTED, "rollcall.serve.xds.max-streams-per-connection=2");
            assertServed(AdsClient.open(fleet.channel()));
            assertThat(fleet.streams()).isEqualTo(3);
            a.cancel();
            await().atMost(WAIT).until(() -> fleet.streams() == 2);
            assertServed(AdsClient.open(one));
        }
    }

    @Test
    void aStreamSubscribingToMoreNamesThanMaxResourcesPerStreamIsEndedNamingTheKey() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start(Map.of("rollcall.serve.xds.max-resources-per-stream", "4"))) {
            AdsClient oneType = AdsClient.open(fleet.channel());
            oneType.subscribe(LDS, "fleet", "b", "c", "d", "e");
            assertRefused(oneType, Status.Code.RESOURCE_EXHAUSTED, "rollcall.serve.xds.max-resources-per-stream=4");

            AdsClient twoTypes = AdsClient.open(fleet.channel());
            twoTypes.subscribe(LDS, "fleet", "b", "c");
            assertThat(twoTypes.next(LDS).getResourcesCount()).isEqualTo(1);
            twoTypes.subscribe(CDS, "fleet", "b");
            assertRefused(twoTypes, Status.Code.RESOURCE_EXHAUSTED, "rollcall.serve.xds.max-resources-per-stream=4");

            AdsClient channelSized = AdsClient.open(fleet.channel());
            channelSized.subscribe(LDS, "fleet");
            channelSized.subscribe(CDS, "fleet");
            channelSized.subscribe(EDS, "fleet");
            assertThat(channelSized.next(EDS).getResourcesCount()).as("a gRPC channel's four fit").isEqualTo(1);
            await().atMost(WAIT).until(() -> fleet.streams() == 1);
        }
    }

    @Test
    void anOversizedDiscoveryRequestIsRefusedNamingTheXdsKeyAndFleetCallsKeepTheirOwnBound() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start(Map.of("rollcall.serve.xds.max-request-bytes", "1024"))) {
            AdsClient big = AdsClient.open(fleet.channel());
            big.send(DiscoveryRequest.newBuilder().setTypeUrl(CDS).addResourceNames("fleet")
                    .setNode(big.node().toBuilder().setId("n".repeat(2000))).build());
            assertRefused(big, Status.Code.RESOURCE_EXHAUSTED, "rollcall.serve.xds.max-request-bytes");
            assertServed(AdsClient.open(fleet.channel()));
        }
        try (AdsDoorFleet fleet = AdsDoorFleet.start()) {
            AdsClient eightKiB = AdsClient.open(fleet.channel());
            eightKiB.send(DiscoveryRequest.newBuilder().setTypeUrl(CDS).addResourceNames("fleet")
                    .setNode(eightKiB.node().toBuilder().setId("n".repeat(8192))).build());
            assertThat(eightKiB.next(CDS).getResourcesCount()).as("within the xDS bound (no worker: no Cluster)")
                    .isEqualTo(0);

            StatusRuntimeException refused = catchThrowableOfType(() -> FleetServiceGrpc.newBlockingStub(fleet.channel())
                    .withDeadlineAfter(20, TimeUnit.SECONDS)
                    .holdFleet(HoldFleetRequest.newBuilder().setServiceInstanceId("x".repeat(5000)).build()).next(),
                    StatusRuntimeException.class);
            assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(refused.getStatus().getDescription()).contains("rollcall.serve.max-request-bytes=4096");
        }
    }

    @Test
    void anUnsupportedTypeUrlEndsTheStreamInvalidArgumentNamingItEscaped() throws Exception {
        String type = "type.googleapis.com/" + HostileText.forging("xds-type");
        try (ConsoleCapture console = new ConsoleCapture(); AdsDoorFleet fleet = AdsDoorFleet.start()) {
            AdsClient ads = AdsClient.open(fleet.channel());
            ads.subscribe(type, "fleet");
            assertRefused(ads, Status.Code.INVALID_ARGUMENT, PeerText.escape(type, 200));
            assertServed(AdsClient.open(fleet.channel()));
            assertThat(HostileText.rawInLog(console.text())).isEmpty();
        }
    }

    @Test
    void deltaXdsIsUnimplementedAndTheStateOfTheWorldMethodStillServes() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start()) {
            assertThat(delta(fleet.channel()).getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
            assertServed(AdsClient.open(fleet.channel()));
        }
    }

    @Test
    void withXdsDisabledAdsIsUnimplementedAndTheFleetApiStillServes() throws Exception {
        try (AdsDoorFleet fleet = AdsDoorFleet.start(Map.of("rollcall.serve.xds.enabled", "false"))) {
            AdsClient ads = AdsClient.open(fleet.channel());
            ads.subscribe(CDS, "fleet");
            assertThat(ads.awaitEnd().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
            assertThat(FleetServiceGrpc.newBlockingStub(fleet.channel()).withDeadlineAfter(20, TimeUnit.SECONDS)
                    .getFleet(GetFleetRequest.getDefaultInstance()).getServiceInstanceId())
                    .isEqualTo(fleet.server.instanceId());
        }
    }

    /** How a delta ADS stream that sends one request ends. */
    private static Status delta(ManagedChannel channel) throws Exception {
        CompletableFuture<Status> ended = new CompletableFuture<>();
        ClientCall<DeltaDiscoveryRequest, DeltaDiscoveryResponse> call = channel.newCall(
                AggregatedDiscoveryServiceGrpc.getDeltaAggregatedResourcesMethod(), CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                ended.complete(status);
            }
        }, new Metadata());
        call.request(1);
        call.sendMessage(DeltaDiscoveryRequest.newBuilder().setTypeUrl(CDS).build());
        return ended.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }
}
