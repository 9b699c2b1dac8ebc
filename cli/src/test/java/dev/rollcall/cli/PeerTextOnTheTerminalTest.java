package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a worker says reaches the terminal escaped: a worker (a small gRPC server, not a Rollcall
 * worker) that answers every probe {@code UNAVAILABLE} with a line break and a terminal escape in
 * its message cannot start a line of its own or clear the screen of whoever runs
 * {@code rollcall workers} or {@code rollcall probe}, in the table or in JSON.
 */
class PeerTextOnTheTerminalTest {

    private static final String FORGED = "busy\n[main] INFO FORGED line \u001b[2J";
    private static final String ESCAPED = "busy\\n[main] INFO FORGED line \\u001b[2J";

    @TempDir
    static Path dir;
    private static Server forger;
    private static String url;
    private static Path config;

    @BeforeAll
    static void startTheForger() throws IOException {
        forger = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new WorkerServiceGrpc.WorkerServiceImplBase() {
                    @Override
                    public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
                        out.onError(Status.UNAVAILABLE.withDescription(FORGED).asRuntimeException());
                    }
                })
                .build().start();
        url = "grpc://127.0.0.1:" + forger.getPort();
        config = Files.write(dir.resolve("rollcall.properties"), List.of(
                "rollcall.discovery.type=static",
                "rollcall.discovery.static.endpoints=" + url,
                "rollcall.policy.type=semver",
                "rollcall.policy.semver.range=^1.0",
                "rollcall.probe.timeout=10s"), StandardCharsets.UTF_8);
    }

    @AfterAll
    static void stopTheForger() throws InterruptedException {
        forger.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private static void nothingRaw(CommandRun.Finished run) {
        for (String text : List.of(run.out(), run.err())) {
            assertThat(text).as(run.transcript()).doesNotContain("\u001b");
            assertThat(text.lines()).as(run.transcript()).noneMatch(l -> l.startsWith("[main] INFO FORGED"));
        }
    }

    @Test
    void theWorkersTableShowsTheWorkersMessageEscaped() {
        CommandRun.Finished run = CommandRun.run("workers", "--config", config.toString(), "--wait", "30s");

        assertThat(run.exit()).as(run.transcript()).isZero();
        assertThat(run.out()).as(run.transcript()).contains(url + "  -        -         unreachable: UNAVAILABLE: "
                + ESCAPED);
        nothingRaw(run);
    }

    @Test
    void theJsonHoldsTheSameEscapedReason() throws IOException {
        CommandRun.Finished run = CommandRun.run("workers", "--config", config.toString(), "--wait", "30s",
                "--output", "json");

        JsonNode worker = new ObjectMapper().readTree(run.out()).get("workers").get(0);
        assertThat(worker.get("reason").asText()).isEqualTo("UNAVAILABLE: " + ESCAPED);
        nothingRaw(run);
    }

    @Test
    void probeShowsTheWorkersMessageEscaped() {
        CommandRun.Finished run = CommandRun.run("probe", "--timeout", "10s", url);

        assertThat(run.exit()).as(run.transcript()).isEqualTo(1);
        assertThat(run.out()).contains("unreachable: UNAVAILABLE: " + ESCAPED);
        nothingRaw(run);
    }

    /** The JSON writer escapes what a terminal acts on even where JSON itself would not: C1 controls, bidi overrides. */
    @Test
    void jsonEscapesWhatATerminalWouldActOn() {
        String json = WorkersCommand.json(dev.rollcall.api.registry.FleetSnapshot.builder(1)
                .publishedAt(java.time.Instant.EPOCH).policy("p\u009b2J\u202e\u007f é").build(), false);
        assertThat(json).contains("\"policy\":\"p\\u009b2J\\u202e\\u007f é\"");
    }
}
