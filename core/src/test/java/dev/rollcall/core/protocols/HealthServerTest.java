package dev.rollcall.core.protocols;

import static org.assertj.core.api.Assertions.assertThatCode;

import io.grpc.health.v1.HealthGrpc;
import org.junit.jupiter.api.Test;

/**
 * The restart-in-place tests here (a successor on the same port) rest on this: once a
 * {@link HealthServer} is closed its port can be bound again at once. With gRPC's shared event
 * loops it could not, about one time in three (the listening socket closed on the loop's next
 * select, after close() had returned): CI's "Failed to bind" in DatafusionProtocolTest.
 */
class HealthServerTest {

    @Test
    void aClosedServersPortCanBeBoundAgainAtOnce() throws Exception {
        HealthServer server = HealthServer.startBelowEphemeral(new HealthGrpc.HealthImplBase() { });
        int port = server.port();
        try {
            for (int restart = 0; restart < 200; restart++) {
                server.close();
                HealthServer[] successor = new HealthServer[1];
                assertThatCode(() -> successor[0] = HealthServer.start(port, new HealthGrpc.HealthImplBase() { }))
                        .as("restart %d on port %d", restart, port).doesNotThrowAnyException();
                server = successor[0];
            }
        } finally {
            server.close();
        }
    }
}
