package dev.rollcall.core.internal.probe;

import static org.assertj.core.api.Assertions.assertThat;

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
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What the resolver makes of a protocol that misbehaves: always a failed probe naming it, never an exception or a hang. */
class ProtocolTransportTest {

    private static final WorkerEndpoint WORKER = WorkerEndpoint.of("127.0.0.1", 1);
    private final ProbeClient client = new ProbeClient("rollcall-test-protocol", 1 << 20);

    @AfterEach
    void close() {
        client.close();
    }

    /** A protocol that asks nobody and answers with {@code answer}, its version the worker's. */
    private static ProbeProtocol protocol(Function<ProbeRequest, CompletableFuture<ProbeOutcome>> answer) {
        return protocol(Source.WORKER, answer);
    }

    /** A protocol that asks nobody and answers with {@code answer}, its version from {@code version}. */
    private static ProbeProtocol protocol(Source version, Function<ProbeRequest, CompletableFuture<ProbeOutcome>> answer) {
        return new ProbeProtocol() {
            @Override
            public ProbeCapabilities capabilities() {
                return new ProbeCapabilities(version, Source.NONE, Source.NONE, Source.NONE, Source.NONE,
                        false, false);
            }

            @Override
            public CompletableFuture<ProbeOutcome> probe(ProbeRequest request) {
                return answer.apply(request);
            }
        };
    }

    private ProbeOutcome probe(ProbeProtocol protocol, Duration timeout) throws Exception {
        ProbeTransport transport = ProtocolTransport.of(new ProbeProtocols.Chosen("broken", protocol), client, null, null,
                1 << 20);
        return transport.open(WORKER).probe(WORKER, timeout).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aProtocolThatThrowsIsAFailedProbeNamingIt() throws Exception {
        ProbeOutcome o = probe(protocol(r -> {
            throw new IllegalStateException("bug");
        }), Duration.ofSeconds(1));
        assertThat(o).isEqualTo(new ProbeOutcome.Failed(Status.Code.INTERNAL,
                "probe protocol 'broken' failed: java.lang.IllegalStateException: bug"));
    }

    @Test
    void anExceptionalFutureOrANullIsAFailedProbe() throws Exception {
        assertThat(probe(protocol(r -> CompletableFuture.failedFuture(new RuntimeException("boom"))), Duration.ofSeconds(1)))
                .isInstanceOfSatisfying(ProbeOutcome.Failed.class, f -> assertThat(f.reason()).contains("'broken'", "boom"));
        assertThat(probe(protocol(r -> null), Duration.ofSeconds(1)))
                .isInstanceOfSatisfying(ProbeOutcome.Failed.class, f -> assertThat(f.reason()).contains("'broken'"));
    }

    @Test
    void aProbeThatNeverCompletesFailsASecondAfterItsDeadline() throws Exception {
        long start = System.nanoTime();
        ProbeOutcome o = probe(protocol(r -> new CompletableFuture<>()), Duration.ofMillis(200));
        assertThat(o).isInstanceOfSatisfying(ProbeOutcome.Failed.class, f -> {
            assertThat(f.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
            assertThat(f.reason()).contains("200 ms", "broken");
        });
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(1200));
    }

    @Test
    void anAnswerOutOfBoundsIsMalformed() throws Exception {
        String tooLong = "1".repeat(WorkerEndpoint.MAX_VERSION_CHARS + 1);
        for (String version : List.of(tooLong, "1.0 beta", "1.0\n")) {
            ProbeOutcome o = probe(protocol(r -> CompletableFuture.completedFuture(new ProbeOutcome.Answered(
                    new WorkerInfo(r.candidate(), version, "", Map.of(), List.of()), ServingState.SERVING))),
                    Duration.ofSeconds(1));
            assertThat(o).as(version).isInstanceOfSatisfying(ProbeOutcome.Failed.class,
                    f -> assertThat(f.reason()).startsWith("malformed answer (broken): "));
        }
    }

    /** As in rollcall.v1, a worker that set no version answers {@code ""}; a claim of {@code ""} is no claim. */
    @Test
    void anEmptyVersionIsAnAnswerFromTheWorkerButNoClaimFromDiscovery() throws Exception {
        Function<ProbeRequest, CompletableFuture<ProbeOutcome>> empty = r -> CompletableFuture.completedFuture(
                new ProbeOutcome.Answered(new WorkerInfo(r.candidate(), "", "", Map.of(), List.of()), ServingState.SERVING));
        assertThat(probe(protocol(Source.WORKER, empty), Duration.ofSeconds(1)))
                .isInstanceOfSatisfying(ProbeOutcome.Answered.class, a -> assertThat(a.info().version()).isEmpty());
        assertThat(probe(protocol(Source.DISCOVERY, empty), Duration.ofSeconds(1)))
                .isInstanceOfSatisfying(ProbeOutcome.Failed.class,
                        f -> assertThat(f.reason()).isEqualTo("malformed answer (broken): no version"));
    }

    @Test
    void aProtocolThatDoesNotConnectGetsNoChannelAndItsLinkNeverDrops() throws Exception {
        ProbeTransport transport = ProtocolTransport.of(new ProbeProtocols.Chosen("broken", protocol(r ->
                CompletableFuture.completedFuture(new ProbeOutcome.Failed(Status.Code.UNKNOWN,
                        "channel " + r.channel())))), client, null, null, 1 << 20);
        ProbeTransport.Link link = transport.open(WORKER);
        assertThat(link.probe(WORKER, Duration.ofSeconds(1)).get(10, TimeUnit.SECONDS))
                .isEqualTo(new ProbeOutcome.Failed(Status.Code.UNKNOWN, "channel null"));
        assertThat(link.ready()).isTrue();
        assertThat(transport.pushes()).isFalse();
        assertThat(transport.sends()).as("the version is the worker's: it is asked").isTrue();
        link.close(false).get(10, TimeUnit.SECONDS);
    }
}
