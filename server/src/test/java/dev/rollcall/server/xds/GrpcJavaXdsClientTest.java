package dev.rollcall.server.xds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * grpc-java's own xDS client ({@code io.grpc:grpc-xds}) on {@code xds:///fleet} against a real
 * {@code FleetServer}, with real workers on loopback: where its calls land as Rollcall's verdicts
 * change. Calls are counted on the workers' side, so a call that reached a worker is counted even
 * when the test never sees its answer.
 */
class GrpcJavaXdsClientTest {

    private static final Logger log = LoggerFactory.getLogger(GrpcJavaXdsClientTest.class);
    /** Calls in a row that must all miss a worker before the client counts as having let go of it. */
    static final int CLEAN_WINDOW = 50;

    @Test
    void callsSpreadOverEveryCompatibleWorkerAndNoneReachesTheRejectedOne() throws Exception {
        try (XdsFleet fleet = XdsFleet.start()) {
            XdsFleet.Worker a = fleet.worker("1.0.0");
            XdsFleet.Worker b = fleet.worker("1.1.0");
            XdsFleet.Worker c = fleet.worker("1.2.0");
            XdsFleet.Worker rejected = fleet.worker("2.0.0");
            fleet.list(a, b, c, rejected);
            fleet.await(State.COMPATIBLE, a, b, c);
            fleet.await(State.REJECTED, rejected);
            try (GrpcXdsClient client = GrpcXdsClient.dial(fleet.port(), "fleet")) {
                Set<String> versions = new HashSet<>();
                await().atMost(XdsFleet.WAIT).until(() -> {
                    versions.add(client.call().getVersion());
                    return a.served() > 0 && b.served() > 0 && c.served() > 0;
                });
                for (int i = 0; i < 30; i++) {
                    versions.add(client.call().getVersion());
                }
                assertThat(versions).containsExactlyInAnyOrder("1.0.0", "1.1.0", "1.2.0");
                assertThat(rejected.served()).as("calls that reached the rejected worker").isZero();
            }
        }
    }

    @Test
    void afterADrainNoNewCallReachesTheDrainedWorkerAndAfterResumeItGetsCallsAgain() throws Exception {
        try (XdsFleet fleet = XdsFleet.start()) {
            XdsFleet.Worker a = fleet.worker("1.0.0");
            XdsFleet.Worker b = fleet.worker("1.1.0");
            fleet.list(a, b);
            fleet.await(State.COMPATIBLE, a, b);
            try (GrpcXdsClient client = GrpcXdsClient.dial(fleet.port(), "fleet")) {
                callUntilBothServe(client, a, b);
                List<Long> millis = new ArrayList<>();
                // two rounds: more drains and resumes in a row would get the worker damped for flapping
                for (int round = 0; round < 2; round++) {
                    long drained = System.nanoTime();
                    a.worker().drain();
                    millis.add(callUntilNoneLandsOn(client, a, drained));
                    long served = a.served();
                    for (int i = 0; i < CLEAN_WINDOW; i++) {
                        assertThat(client.call().getInstanceId()).isEqualTo(b.instanceId());
                    }
                    assertThat(a.served()).as("calls that reached the drained worker").isEqualTo(served);

                    a.worker().resume();
                    callUntilBothServe(client, a, b);
                }
                log.info("grpc-java xDS client: drain() -> first call after which none lands on the drained worker:"
                        + " {} ms (one per drain)", millis);
            }
        }
    }

    @Test
    void aWorkerThatLeavesDiscoveryGetsNoNewCall() throws Exception {
        try (XdsFleet fleet = XdsFleet.start()) {
            XdsFleet.Worker a = fleet.worker("1.0.0");
            XdsFleet.Worker b = fleet.worker("1.1.0");
            fleet.list(a, b);
            fleet.await(State.COMPATIBLE, a, b);
            try (GrpcXdsClient client = GrpcXdsClient.dial(fleet.port(), "fleet")) {
                callUntilBothServe(client, a, b);
                long left = System.nanoTime();
                fleet.list(b);
                long millis = callUntilNoneLandsOn(client, a, left);
                long served = a.served();
                for (int i = 0; i < CLEAN_WINDOW; i++) {
                    client.call();
                }
                assertThat(a.served()).as("calls that reached the worker discovery no longer lists").isEqualTo(served);
                log.info("grpc-java xDS client: worker left discovery -> first call after which none lands on it:"
                        + " {} ms", millis);
            }
        }
    }

    /**
     * grpc-java drops a {@code DRAINING} endpoint from the addresses it balances over (only
     * {@code HEALTHY} and {@code UNKNOWN} count as healthy): no new call, while a stream already
     * open on it goes on and sees the worker's own news.
     */
    @Test
    void aDrainingEndpointGetsNoNewCallWhileAStreamAlreadyOpenOnItGoesOn() throws Exception {
        try (XdsFleet fleet = XdsFleet.start()) {
            XdsFleet.Worker a = fleet.worker("1.0.0");
            XdsFleet.Worker b = fleet.worker("1.1.0");
            fleet.list(a, b);
            fleet.await(State.COMPATIBLE, a, b);
            try (GrpcXdsClient client = GrpcXdsClient.dial(fleet.port(), "fleet")) {
                callUntilBothServe(client, a, b);
                Iterator<WorkerInfoResponse> onA = null;
                while (onA == null) {
                    Iterator<WorkerInfoResponse> watch = client.watch(XdsFleet.WAIT.toSeconds());
                    if (watch.next().getInstanceId().equals(a.instanceId())) {
                        onA = watch;
                    }
                }
                a.worker().drain();
                fleet.await(State.DRAINING, a);
                WorkerInfoResponse news = onA.next();
                assertThat(news.getInstanceId()).isEqualTo(a.instanceId());
                assertThat(news.getState()).as("the open stream's next answer").isEqualTo(ServingState.DRAINING);

                callUntilNoneLandsOn(client, a, System.nanoTime());
                long served = a.served();
                for (int i = 0; i < CLEAN_WINDOW; i++) {
                    client.call();
                }
                assertThat(a.served()).as("new calls that reached the draining worker").isEqualTo(served);
            }
        }
    }

    /**
     * A fleet left without a compatible worker: grpc-java, given endpoints none of which is
     * {@code HEALTHY}, would keep calling the ones it had, so Rollcall withdraws the Cluster and the
     * channel fails calls until a compatible worker is back.
     */
    @Test
    void whenEveryWorkerDrainsCallsFailUnavailableAndNoneReachesThemUntilOneResumes() throws Exception {
        try (XdsFleet fleet = XdsFleet.start()) {
            XdsFleet.Worker a = fleet.worker("1.0.0");
            fleet.list(a);
            fleet.await(State.COMPATIBLE, a);
            try (GrpcXdsClient client = GrpcXdsClient.dial(fleet.port(), "fleet")) {
                callUntilBothServe(client, a);
                a.worker().drain();
                awaitCallsFailUnavailable(client);
                long served = a.served();
                for (int i = 0; i < CLEAN_WINDOW; i++) {
                    assertThatThrownBy(client::callFailingFast).isInstanceOf(StatusRuntimeException.class);
                }
                assertThat(a.served()).as("calls that reached the only worker, draining").isEqualTo(served);

                a.worker().resume();
                callUntilBothServe(client, a);
            }
        }
    }

    @Test
    void whenTheLastCompatibleWorkerLeavesAndOnlyARejectedOneIsListedNeitherGetsACall() throws Exception {
        try (XdsFleet fleet = XdsFleet.start()) {
            XdsFleet.Worker a = fleet.worker("1.0.0");
            XdsFleet.Worker rejected = fleet.worker("2.0.0");
            fleet.list(a);
            fleet.await(State.COMPATIBLE, a);
            try (GrpcXdsClient client = GrpcXdsClient.dial(fleet.port(), "fleet")) {
                callUntilBothServe(client, a);
                fleet.list(rejected);
                awaitCallsFailUnavailable(client);
                long served = a.served();
                for (int i = 0; i < CLEAN_WINDOW; i++) {
                    assertThatThrownBy(client::callFailingFast).isInstanceOf(StatusRuntimeException.class);
                }
                assertThat(a.served()).as("calls that reached the worker discovery no longer lists").isEqualTo(served);
                assertThat(rejected.served()).as("calls that reached the rejected worker").isZero();
            }
        }
    }

    private static void awaitCallsFailUnavailable(GrpcXdsClient client) {
        await().atMost(XdsFleet.WAIT).untilAsserted(() -> assertThatThrownBy(client::callFailingFast)
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE)));
    }

    @Test
    void workersInTwoZonesAllGetCalls() throws Exception {
        try (XdsFleet fleet = XdsFleet.start()) {
            XdsFleet.Worker a1 = fleet.worker("1.0.0");
            XdsFleet.Worker a2 = fleet.worker("1.0.0");
            XdsFleet.Worker b1 = fleet.worker("1.1.0");
            fleet.discovery.push(List.of(a1.endpoint().withLabels(Map.of("zone", "zone-a")),
                    a2.endpoint().withLabels(Map.of("zone", "zone-a")),
                    b1.endpoint().withLabels(Map.of("topology.kubernetes.io/zone", "zone-b"))));
            fleet.await(State.COMPATIBLE, a1, a2, b1);
            try (GrpcXdsClient client = GrpcXdsClient.dial(fleet.port(), "fleet")) {
                await().atMost(XdsFleet.WAIT).until(() -> {
                    client.call();
                    return a1.served() > 0 && a2.served() > 0 && b1.served() > 0;
                });
            }
        }
    }

    /** Calls until each of {@code these} has served one. */
    static void callUntilBothServe(GrpcXdsClient client, XdsFleet.Worker... these) {
        long[] before = new long[these.length];
        for (int i = 0; i < these.length; i++) {
            before[i] = these[i].served();
        }
        await().atMost(XdsFleet.WAIT).until(() -> {
            client.call();
            for (int i = 0; i < these.length; i++) {
                if (these[i].served() == before[i]) {
                    return false;
                }
            }
            return true;
        });
    }

    /**
     * Calls until {@link #CLEAN_WINDOW} calls in a row have landed elsewhere than on {@code gone};
     * returns the milliseconds from {@code since} to the start of the first of them.
     */
    static long callUntilNoneLandsOn(GrpcXdsClient client, XdsFleet.Worker gone, long since) {
        long deadline = since + XdsFleet.WAIT.toNanos();
        long cleanSince = System.nanoTime();
        int clean = 0;
        while (clean < CLEAN_WINDOW) {
            assertThat(System.nanoTime()).as("calls still land on %s", gone.endpoint()).isLessThan(deadline);
            long started = System.nanoTime();
            long served = gone.served();
            client.call();
            if (gone.served() != served) {
                clean = 0;
            } else if (clean++ == 0) {
                cleanSince = started;
            }
        }
        return TimeUnit.NANOSECONDS.toMillis(cleanSince - since);
    }
}
