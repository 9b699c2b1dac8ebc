package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.protocol.datafusion.GetWorkerInfoRequest;
import dev.rollcall.protocol.datafusion.GetWorkerInfoResponse;
import dev.rollcall.protocol.datafusion.WorkerServiceGrpc;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A datafusion-distributed worker that never called {@code with_version()} (their default: their
 * docs match {@code ""} against {@code ""}), on a plain grpc-java server serving the shipped
 * {@code worker.proto}, judged by the real policies configured by properties: {@code exact} with
 * {@code accept-no-version} takes it, {@code semver ^1.4.0} leaves it out saying why.
 */
class DatafusionNoVersionTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private Server server;
    private WorkerEndpoint endpoint;

    @BeforeEach
    void startAWorkerWithoutAVersion() throws Exception {
        server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(new WorkerServiceGrpc.WorkerServiceImplBase() {
                    @Override
                    public void getWorkerInfo(GetWorkerInfoRequest request, StreamObserver<GetWorkerInfoResponse> answer) {
                        answer.onNext(GetWorkerInfoResponse.getDefaultInstance()); // version never set
                        answer.onCompleted();
                    }
                }).build().start();
        endpoint = WorkerEndpoint.of("127.0.0.1", server.getPort());
    }

    @AfterEach
    void stop() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private WorkerStatus settled(Map<String, String> policy) throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        Map<String, String> keys = new java.util.HashMap<>(policy);
        keys.put("rollcall.probe.protocol", "datafusion-distributed");
        try (WorkerResolver resolver = WorkerResolver.builder().config(RollcallConfig.of(keys)).discovery(discovery)
                .build()) {
            discovery.push(List.of(endpoint));
            FleetSnapshot s = resolver.await(x -> x.status(endpoint.url())
                    .map(st -> st.state() == State.COMPATIBLE || st.state() == State.REJECTED).orElse(false), WAIT);
            return s.status(endpoint.url()).orElseThrow();
        }
    }

    @Test
    void exactWithAcceptNoVersionTakesAWorkerThatNeverSetOne() throws Exception {
        WorkerStatus s = settled(Map.of("rollcall.policy.type", "exact",
                "rollcall.policy.exact.accept-no-version", "true"));
        assertThat(s.state()).isEqualTo(State.COMPATIBLE);
        assertThat(s.info().orElseThrow().version()).isEmpty();
    }

    @Test
    void semverLeavesItOutSayingItHasNoVersion() throws Exception {
        WorkerStatus s = settled(Map.of("rollcall.policy.type", "semver", "rollcall.policy.semver.range", "^1.4.0"));
        assertThat(s.state()).isEqualTo(State.REJECTED);
        assertThat(s.reason()).isEqualTo("no version (the worker never set one) is outside ^1.4.0");
    }
}
