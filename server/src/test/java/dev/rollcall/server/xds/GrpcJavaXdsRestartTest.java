package dev.rollcall.server.xds;

import static dev.rollcall.server.xds.GrpcJavaXdsClientTest.CLEAN_WINDOW;
import static dev.rollcall.server.xds.GrpcJavaXdsClientTest.callUntilBothServe;
import static dev.rollcall.server.xds.GrpcJavaXdsClientTest.callUntilNoneLandsOn;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.registry.WorkerStatus.State;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code rollcall serve} restarted under grpc-java's xDS client: the client keeps the endpoints it
 * was last given while its control plane is gone, and follows the new server once it is back.
 */
class GrpcJavaXdsRestartTest {

    private static final Logger log = LoggerFactory.getLogger(GrpcJavaXdsRestartTest.class);

    @Test
    void callsKeepGoingToTheLastGoodWorkersWhileRollcallServeIsDownAndADrainIsFollowedAfterItIsBack()
            throws Exception {
        try (XdsFleet fleet = XdsFleet.start()) {
            XdsFleet.Worker a = fleet.worker("1.0.0");
            XdsFleet.Worker b = fleet.worker("1.1.0");
            XdsFleet.Worker rejected = fleet.worker("2.0.0");
            fleet.list(a, b, rejected);
            fleet.await(State.COMPATIBLE, a, b);
            fleet.await(State.REJECTED, rejected);
            try (GrpcXdsClient client = GrpcXdsClient.dial(fleet.port(), "fleet")) {
                callUntilBothServe(client, a, b);

                fleet.stopServer();
                callUntilBothServe(client, a, b);
                for (int i = 0; i < CLEAN_WINDOW; i++) {
                    assertThat(client.call().getVersion()).startsWith("1.");
                }
                assertThat(rejected.served()).as("calls that reached the rejected worker").isZero();

                fleet.startServer();
                long drained = System.nanoTime();
                a.worker().drain();
                long millis = callUntilNoneLandsOn(client, a, drained);
                long served = a.served();
                for (int i = 0; i < CLEAN_WINDOW; i++) {
                    assertThat(client.call().getInstanceId()).isEqualTo(b.instanceId());
                }
                assertThat(a.served()).as("calls that reached the drained worker").isEqualTo(served);
                assertThat(rejected.served()).isZero();
                log.info("grpc-java xDS client: rollcall serve back on its port, then drain() -> first call after"
                        + " which none lands on the drained worker: {} ms (the client's reconnection included)",
                        millis);
            }
        }
    }
}
