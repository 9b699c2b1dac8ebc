package dev.rollcall.server.xds;

import static dev.rollcall.server.xds.GrpcJavaXdsClientTest.CLEAN_WINDOW;
import static dev.rollcall.server.xds.GrpcJavaXdsClientTest.callUntilBothServe;
import static dev.rollcall.server.xds.GrpcJavaXdsClientTest.callUntilNoneLandsOn;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.testkit.faults.FaultProxy;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A successor behind a worker's address under grpc-java's xDS client: discovery keeps listing the
 * address while what answers there changes from a 1.x worker to a rejected 2.x one.
 */
class GrpcJavaXdsSuccessorTest {

    private static final Logger log = LoggerFactory.getLogger(GrpcJavaXdsSuccessorTest.class);

    /**
     * The 1.x worker closes (draining first, as {@code close()} does) and a 2.x worker binds its
     * port: discovery lists the same address throughout, and the client's calls meanwhile must not
     * reach what now answers there.
     */
    @Test
    void aRejectedSuccessorOnTheAddressOfAWorkerThatClosedGetsNoCall() throws Exception {
        try (XdsFleet fleet = XdsFleet.start()) {
            XdsFleet.Worker old = fleet.worker("1.0.0");
            XdsFleet.Worker other = fleet.worker("1.1.0");
            fleet.list(old, other);
            fleet.await(State.COMPATIBLE, old, other);
            try (GrpcXdsClient client = GrpcXdsClient.dial(fleet.port(), "fleet")) {
                callUntilBothServe(client, old, other);
                AtomicBoolean calling = new AtomicBoolean(true);
                CompletableFuture<Void> meanwhile = CompletableFuture.runAsync(() -> {
                    while (calling.get()) {
                        client.call();
                    }
                });
                old.worker().close();
                XdsFleet.Worker successor = fleet.worker("2.0.0", old.worker().port());
                fleet.await(State.REJECTED, successor);
                calling.set(false);
                meanwhile.get(XdsFleet.WAIT.toSeconds(), TimeUnit.SECONDS);
                for (int i = 0; i < CLEAN_WINDOW; i++) {
                    assertThat(client.call().getInstanceId()).isEqualTo(other.instanceId());
                }
                assertThat(successor.served()).as("calls that reached the rejected successor").isZero();
            }
        }
    }

    /**
     * The worker behind an address crashes (its connections end with a RST, nobody drains it) and a
     * 2.x process answers there at once, as when a host's supervisor restarts it with a new build.
     * The resolver sees its connection drop, leaves the address out at once and rejects what answers
     * there now; the xDS client's own connection drops at the same moment and reconnects to the
     * successor. No client-side check stands between them (the {@code rollcall:} channel verifies each
     * connection; an xDS client cannot), so a call may land on the successor before the new
     * ClusterLoadAssignment arrives: what is promised is that none does once it has.
     */
    @Test
    void aRejectedSuccessorBehindACrashedWorkersAddressGetsNoCallOnceTheClientHasTheNewEndpoints()
            throws Exception {
        try (XdsFleet fleet = XdsFleet.start()) {
            XdsFleet.Worker old = fleet.worker("1.0.0");
            XdsFleet.Worker other = fleet.worker("1.1.0");
            XdsFleet.Worker successor = fleet.worker("2.0.0");
            try (FaultProxy address = FaultProxy.to(old.endpoint())) {
                fleet.discovery.push(List.of(address.endpoint(), other.endpoint()));
                fleet.resolver.await(s -> s.counts().compatible() == 2, XdsFleet.WAIT);
                try (GrpcXdsClient client = GrpcXdsClient.dial(fleet.port(), "fleet")) {
                    callUntilBothServe(client, old, other);
                    AtomicBoolean calling = new AtomicBoolean(true);
                    CompletableFuture<Void> meanwhile = CompletableFuture.runAsync(() -> {
                        while (calling.get()) {
                            try {
                                client.call();
                            } catch (StatusRuntimeException crashed) {
                                // a call in flight on the crashed worker's connection ends with it
                            }
                        }
                    });
                    address.redirectNewConnections(successor.endpoint());
                    address.resetConnections();
                    fleet.resolver.await(s -> s.status(address.endpoint().url())
                            .filter(st -> st.state() == State.REJECTED).isPresent(), XdsFleet.WAIT);
                    calling.set(false);
                    meanwhile.get(XdsFleet.WAIT.toSeconds(), TimeUnit.SECONDS);
                    callUntilNoneLandsOn(client, successor, System.nanoTime());
                    long raced = successor.served();
                    for (int i = 0; i < CLEAN_WINDOW; i++) {
                        assertThat(client.call().getInstanceId()).isEqualTo(other.instanceId());
                    }
                    assertThat(successor.served()).as("calls that reached the rejected successor").isEqualTo(raced);
                    log.info("grpc-java xDS client: calls that reached a rejected successor behind a crashed worker's"
                            + " address before the client had the new endpoints: {}", raced);
                }
            }
        }
    }
}
