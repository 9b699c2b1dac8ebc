package dev.rollcall.core.internal.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.core.internal.protocols.ProbeProtocols;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.spi.ProbeCapabilities;
import dev.rollcall.protocol.spi.ProbeCapabilities.Source;
import dev.rollcall.protocol.spi.ProbeProtocol;
import dev.rollcall.protocol.spi.ProbeRequest;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A kept link of a protocol other than {@code rollcall} is checked with the protocol's own probe:
 * only a check that goes unanswered ({@code DEADLINE_EXCEEDED}, {@code UNAVAILABLE}) drops the
 * connection; any other outcome says the connection carries calls. A real server on loopback makes
 * the connection READY; the checks' outcomes are scripted.
 */
class LivenessCallsTest {

    private static final Duration OFTEN = Duration.ofMillis(100);
    private final ProbeClient client = new ProbeClient("rollcall-test-liveness", 1 << 20);
    private Server server;

    @AfterEach
    void close() throws InterruptedException {
        client.close();
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /**
     * A protocol that connects: every probe is a real {@code Health/Check} (so the connection is
     * READY), then answered with {@code script} of its number (1: the first probe), counted in
     * {@code probes}.
     */
    private static ProbeProtocol scripted(AtomicInteger probes, CountDownLatch checked, IntFunction<ProbeOutcome> script) {
        return new ProbeProtocol() {
            @Override
            public ProbeCapabilities capabilities() {
                return new ProbeCapabilities(Source.WORKER, Source.NONE, Source.NONE, Source.NONE, Source.NONE,
                        false, true);
            }

            @Override
            public CompletableFuture<ProbeOutcome> probe(ProbeRequest request) {
                int n = probes.incrementAndGet();
                HealthGrpc.newFutureStub(request.channel()).withDeadlineAfter(5, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.getDefaultInstance());
                if (n > 1) {
                    checked.countDown();
                }
                return CompletableFuture.completedFuture(script.apply(n));
            }
        };
    }

    private static ProbeOutcome answered(WorkerEndpoint e) {
        return new ProbeOutcome.Answered(new WorkerInfo(e, "1.0.0", "", Map.of(), List.of()), ServingState.SERVING);
    }

    private WorkerEndpoint serve() throws Exception {
        server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(new HealthStatusManager().getHealthService()).build().start();
        return WorkerEndpoint.of("127.0.0.1", server.getPort());
    }

    /** A link probed once and answered, then watched as the scheduler watches a kept worker. */
    private static ProbeTransport.Link kept(ProbeTransport transport, WorkerEndpoint worker, CountDownLatch dropped)
            throws Exception {
        ProbeTransport.Link link = transport.open(worker);
        assertThat(link.probe(worker, Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS).answered()).isTrue();
        // The answer came over the connection; READY follows on the channel's own thread.
        await().atMost(Duration.ofSeconds(5)).until(link::ready);
        link.whenNotReady(dropped::countDown);
        return link;
    }

    @Test
    void aCheckThatGoesUnansweredDropsTheKeptConnection() throws Exception {
        WorkerEndpoint worker = serve();
        AtomicInteger probes = new AtomicInteger();
        CountDownLatch checked = new CountDownLatch(1);
        ProbeTransport transport = ProtocolTransport.of(new ProbeProtocols.Chosen("scripted", scripted(probes, checked,
                n -> n == 1 ? answered(worker) : new ProbeOutcome.Failed(Status.Code.DEADLINE_EXCEEDED, "no answer"))),
                client, null, new ProtocolTransport.Liveness(OFTEN, OFTEN), 1 << 20);
        CountDownLatch dropped = new CountDownLatch(1);
        ProbeTransport.Link link = kept(transport, worker, dropped);

        assertThat(dropped.await(10, TimeUnit.SECONDS)).as("the connection left READY").isTrue();
        assertThat(link.ready()).isFalse();
        assertThat(probes.get()).isEqualTo(2);
        link.close(false).get(10, TimeUnit.SECONDS);
    }

    @Test
    void checksAnsweredOrFailingOtherwiseKeepTheConnection() throws Exception {
        WorkerEndpoint worker = serve();
        AtomicInteger probes = new AtomicInteger();
        CountDownLatch checked = new CountDownLatch(4);
        ProbeTransport transport = ProtocolTransport.of(new ProbeProtocols.Chosen("scripted", scripted(probes, checked,
                n -> switch (n % 3) {
                    case 0 -> new ProbeOutcome.Failed(Status.Code.UNIMPLEMENTED, "no such method");
                    case 1 -> answered(worker);
                    default -> new ProbeOutcome.Answered(new WorkerInfo(worker, "1.0.0", "", Map.of(), List.of()),
                            ServingState.NOT_SERVING);
                })), client, null, new ProtocolTransport.Liveness(OFTEN, OFTEN), 1 << 20);
        CountDownLatch dropped = new CountDownLatch(1);
        ProbeTransport.Link link = kept(transport, worker, dropped);

        assertThat(checked.await(10, TimeUnit.SECONDS)).as("four checks, every 100 ms").isTrue();
        assertThat(dropped.getCount()).as("the connection was never dropped").isEqualTo(1);
        assertThat(link.ready()).isTrue();
        link.close(false).get(10, TimeUnit.SECONDS);
    }

    @Test
    void withoutLivenessTheKeptConnectionIsNeverChecked() throws Exception {
        WorkerEndpoint worker = serve();
        AtomicInteger probes = new AtomicInteger();
        CountDownLatch checked = new CountDownLatch(1);
        ProbeTransport transport = ProtocolTransport.of(new ProbeProtocols.Chosen("scripted", scripted(probes, checked,
                n -> answered(worker))), client, null, null, 1 << 20);
        ProbeTransport.Link link = kept(transport, worker, new CountDownLatch(1));

        assertThat(checked.await(1, TimeUnit.SECONDS)).as("no check in 10 periods of the other tests").isFalse();
        assertThat(probes.get()).isEqualTo(1);
        link.close(false).get(10, TimeUnit.SECONDS);
    }
}
