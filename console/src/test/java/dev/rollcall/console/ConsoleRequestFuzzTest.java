package dev.rollcall.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes the console's own reading of requests: the {@code Host} rule on any text, and any bytes
 * through the console's HTTP pipeline (Netty's decoder with the console's limits, then the
 * console's handler). Each replays its committed seeds in every test run
 * ({@code src/test/resources/dev/rollcall/console/ConsoleRequestFuzzTestInputs/<method>/}); with
 * {@code JAZZER_FUZZ=1} it fuzzes one target for its {@code maxDuration} (console/README.md has the
command; {@code @Timeout} is then each input's limit, and JUnit's own timeouts must be disabled). The property: only the
 * documented outcomes, no exception, no hang.
 */
class ConsoleRequestFuzzTest {

    private static final HostRule RULE = HostRule.allowing(
            List.of("console.example.internal", "10.1.2.3", "[fd00::1]"), "console.example.internal,10.1.2.3,[fd00::1]");
    /** What the console may answer, by its documentation. */
    private static final Set<Integer> STATUSES = Set.of(200, 400, 403, 404, 405, 414, 431, 503);

    private static WorkerResolver resolver;
    private static ConsoleHandler.Site site;

    @BeforeAll
    static void site() {
        resolver = WorkerResolver.builder().discovery(new PushDiscovery()).policy(SemverRangePolicy.of("^1"))
                .name("fuzz").build();
        Timeline timeline = new Timeline(5);
        FleetJson json = new FleetJson("fuzz", () -> "push", timeline);
        EventStream events = new EventStream("fuzz", json, timeline, resolver::pin, 1, Duration.ofSeconds(15));
        events.close(); // a closed stream refuses every client: no sender thread touches the embedded loop
        site = new ConsoleHandler.Site(ConsoleHandler.pageResources(), resolver::pin, json, events, RULE,
                Duration.ofSeconds(5).toNanos(), Duration.ofSeconds(10).toNanos(), Map.of(), true);
    }

    @AfterAll
    static void closeResolver() {
        resolver.close();
    }

    @FuzzTest(maxDuration = "10m")
    @Timeout(10)
    void hostHeader(byte[] data) {
        String host = new String(data, StandardCharsets.ISO_8859_1);

        HostRule.Verdict verdict = RULE.check(host);

        assertThat(verdict).isNotNull();
        if (verdict == HostRule.Verdict.ALLOWED) {
            String name = HostRule.hostPart(host);
            assertThat(name).as("an allowed Host has a host part: '%s'", host).isNotNull();
            assertThat(isLoopbackLiteral(name) || name.equalsIgnoreCase("localhost")
                    || Set.of("console.example.internal", "10.1.2.3").contains(name.toLowerCase(Locale.ROOT))
                    || sameAddress(name, "fd00::1"))
                    .as("allowed '%s'", host).isTrue();
        }
    }

    @FuzzTest(maxDuration = "10m")
    @Timeout(10)
    void requestBytes(byte[] data) {
        EmbeddedChannel channel = new EmbeddedChannel(new HttpServerCodec(new HttpDecoderConfig()
                .setMaxInitialLineLength(ConsoleServer.MAX_REQUEST_LINE).setMaxHeaderSize(ConsoleServer.MAX_HEADER_BYTES)
                .setMaxChunkSize(ConsoleServer.MAX_HEADER_BYTES)), new ConsoleHandler(site));
        try {
            channel.writeInbound(Unpooled.wrappedBuffer(data));
            channel.runPendingTasks();
            channel.checkException();
            StringBuilder out = new StringBuilder();
            for (Object o = channel.readOutbound(); o != null; o = channel.readOutbound()) {
                ByteBuf b = (ByteBuf) o;
                out.append(b.toString(StandardCharsets.ISO_8859_1));
                b.release();
            }
            String answers = out.toString();
            if (!answers.isEmpty()) {
                assertThat(answers).startsWith("HTTP/1.1 ");
                assertThat(STATUSES).as("status in: %s", answers).contains(Integer.parseInt(answers.substring(9, 12)));
            }
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    private static boolean isLoopbackLiteral(String name) {
        if (name.startsWith("[")) {
            if (name.indexOf(':') < 0) {
                return false; // without a colon the JDK would take it for a name and ask DNS
            }
            try {
                // Bracketed: the JDK parses it as a literal or fails, never asks DNS.
                return InetAddress.getByName(name).isLoopbackAddress();
            } catch (UnknownHostException e) {
                return false;
            }
        }
        String[] parts = name.split("\\.", -1);
        if (parts.length != 4 || !parts[0].equals("127")) {
            return false;
        }
        for (String p : parts) {
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(Character::isDigit) || Integer.parseInt(p) > 255
                    || (p.length() > 1 && p.charAt(0) == '0')) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameAddress(String bracketed, String v6) {
        if (!bracketed.startsWith("[")) {
            return false;
        }
        try {
            return InetAddress.getByName(bracketed).equals(InetAddress.getByName("[" + v6 + "]"));
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
