package dev.rollcall.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * A host's own paths beside the page ({@link InternalConsoleHost}, what {@code rollcall serve} uses):
 * the page keeps its doors for peers on other hosts, and a client that pipelines requests while it
 * reads none of the answers cannot make the console hold them all in memory.
 */
class ConsoleHostedPathsTest {

    @AutoClose
    final Closer closer = new Closer();

    private final WorkerResolver resolver = closer.add(WorkerResolver.builder().discovery(new PushDiscovery())
            .policy(SemverRangePolicy.of("^1")).name("hosted-test").build());

    @Test
    void aClientPipeliningRequestsWhileReadingNoAnswerIsClosedInsteadOfHavingEveryAnswerHeld() throws Exception {
        byte[] large = new byte[256 * 1024];
        AtomicInteger built = new AtomicInteger();
        RollcallConsole console = closer.add(InternalConsoleHost.start(RollcallConsole.builder(resolver),
                Map.of("/large", accept -> {
                    built.incrementAndGet();
                    return new InternalConsoleHost.Answer(200, "application/octet-stream", large);
                })));
        int requests = 200;
        try (Socket s = new Socket()) {
            s.setReceiveBufferSize(4096);
            s.connect(console.address(), 5000);
            OutputStream out = s.getOutputStream();
            out.write("GET /large HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(requests).getBytes(StandardCharsets.US_ASCII));
            out.flush();

            Awaitility.await().atMost(Duration.ofSeconds(30))
                    .until(() -> console.connections() == 0 || built.get() == requests);

            assertThat(built.get()).as("answers built for a client that read none (each %d bytes)", large.length)
                    .isLessThan(50);
            assertThat(console.connections()).as("the connection is closed").isZero();
        }
    }

    @Test
    void thePageAnswersAPeerOnAnotherHostOnlyWithAllowRemoteAndTheHostedPathsAlways() {
        Map<String, InternalConsoleHost.Endpoint> hosted = Map.of("/readyz",
                accept -> new InternalConsoleHost.Answer(200, "text/plain; charset=utf-8", "ready\n".getBytes()));

        assertThat(firstStatus(hosted, false, "/api/fleet")).isEqualTo(403);
        assertThat(firstStatus(hosted, false, "/")).isEqualTo(403);
        assertThat(firstStatus(hosted, false, "/readyz")).isEqualTo(200);
        assertThat(firstStatus(hosted, true, "/api/fleet")).isEqualTo(200);
        assertThat(firstStatus(hosted, true, "/readyz")).isEqualTo(200);
    }

    @Test
    void aHostedPathCannotTakeThePagesOwnAndAPlainConsoleStillNeedsAllowRemoteBeyondLoopback() {
        assertThatThrownBy(() -> InternalConsoleHost.start(RollcallConsole.builder(resolver),
                Map.of("/api/fleet", accept -> null))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("/api/fleet");
        assertThatThrownBy(() -> RollcallConsole.builder(resolver).address(new InetSocketAddress(0)).start())
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("rollcall.console.allow-remote");
    }

    /** The status of the answer to {@code GET path}, from a peer on another host (a documentation address). */
    private int firstStatus(Map<String, InternalConsoleHost.Endpoint> hosted, boolean allowRemote, String path) {
        Timeline timeline = new Timeline(5);
        FleetJson json = new FleetJson("hosted", () -> "push", timeline);
        EventStream events = new EventStream("hosted", json, timeline, resolver::pin, 1, Duration.ofSeconds(15));
        events.close();
        ConsoleHandler.Site site = new ConsoleHandler.Site(ConsoleHandler.pageResources(), resolver::pin, json, events,
                HostRule.loopbackOnly(), Duration.ofSeconds(5).toNanos(), Duration.ofSeconds(10).toNanos(), hosted,
                allowRemote);
        EmbeddedChannel channel = new EmbeddedChannel(new HttpServerCodec(), new ConsoleHandler(site)) {
            @Override
            protected SocketAddress remoteAddress0() {
                return new InetSocketAddress("192.0.2.7", 40000); // never contacted: only what the handler sees
            }
        };
        try {
            channel.writeInbound(Unpooled.copiedBuffer("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                    StandardCharsets.US_ASCII));
            channel.runPendingTasks();
            ByteBuf first = channel.readOutbound();
            try {
                return Integer.parseInt(first.toString(StandardCharsets.US_ASCII).substring(9, 12));
            } finally {
                first.release();
            }
        } finally {
            channel.finishAndReleaseAll();
        }
    }
}
