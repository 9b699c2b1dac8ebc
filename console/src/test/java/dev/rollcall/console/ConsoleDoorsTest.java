package dev.rollcall.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The console's doors against peers that lie, on a real port with real sockets: forged {@code Host}
 * names (DNS rebinding), connections that send a byte and stall, request heads that never end.
 */
class ConsoleDoorsTest {

    /** Generous: a socket read that gets nothing for this long means the server holds the connection. */
    private static final int READ_LIMIT_MS = 10_000;

    @AutoClose
    final Closer closer = new Closer();

    private final WorkerResolver resolver = closer.add(WorkerResolver.builder().discovery(new PushDiscovery())
            .policy(SemverRangePolicy.of("^1")).name("doors-test").build());

    private RollcallConsole console(Map<String, String> keys) {
        return closer.add(RollcallConsole.builder(resolver).config(RollcallConfig.of(keys)).start());
    }

    @Test
    void aHostThatOnlyLooksLikeLoopbackIsRefusedNamingItAndTheKey() throws IOException {
        RollcallConsole console = console(Map.of());
        int port = console.address().getPort();

        for (String forged : List.of("127.evil.example:" + port, "127.0.0.1.evil.example:" + port,
                "localhost.evil.example:" + port, "LOCALHOST.evil.example", "127.0.0.1.nip.io", "evil.example",
                "0177.0.0.1:" + port, "2130706433:" + port, "localhost.:" + port, "[::2]:" + port,
                "[::127.0.0.1]:" + port,
                "[::ffff:10.0.0.1]:" + port)) {
            Answer a = request(console, "GET /api/fleet HTTP/1.1\r\nHost: " + forged + "\r\nConnection: close\r\n\r\n");
            assertThat(a.status()).as(forged).isEqualTo(403);
            String name = forged.startsWith("[") ? forged : forged.replaceFirst(":\\d+$", "");
            assertThat(a.body()).as(forged).contains(name).contains("rollcall.console.allowed-hosts");
        }
    }

    @Test
    void literalLoopbackAddressesAndLocalhostAreAnsweredInAnyCase() throws IOException {
        RollcallConsole console = console(Map.of());
        int port = console.address().getPort();

        for (String host : List.of("127.0.0.1:" + port, "127.0.0.1", "127.1.2.3:" + port, "localhost:" + port,
                "LocalHost", "[::1]:" + port, "[::1]", "[0:0:0:0:0:0:0:1]:" + port)) {
            Answer a = request(console, "GET /api/fleet HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
            assertThat(a.status()).as(host).isEqualTo(200);
        }
    }

    @Test
    void aNameTheOperatorAllowedIsAnsweredAndNoOther() throws IOException {
        RollcallConsole console = console(Map.of("rollcall.console.allowed-hosts",
                " console.example.internal , Fleet.Example,10.1.2.3, fd00::1"));
        int port = console.address().getPort();

        for (String host : List.of("console.example.internal:" + port, "CONSOLE.Example.Internal", "fleet.example",
                "10.1.2.3:8470", "[fd00:0::1]:8470", "localhost:" + port)) {
            assertThat(request(console, "GET / HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n").status())
                    .as(host).isEqualTo(200);
        }
        for (String host : List.of("other.example", "evil.console.example.internal", "console.example.internal.evil",
                "10.1.2.4", "[fd00::2]")) {
            assertThat(request(console, "GET / HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n").status())
                    .as(host).isEqualTo(403);
        }
    }

    @Test
    void servedBeyondLoopbackTheSameHostRuleApplies() throws IOException {
        // Listening on every address (remote allowed); the test still talks over loopback only.
        RollcallConsole console = closer.add(RollcallConsole.builder(resolver).allowRemote(true)
                .address(new InetSocketAddress(0)).allowedHosts(List.of("fleet.example")).start());
        InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), console.address().getPort());

        assertThat(request(loopback, "GET /api/fleet HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
                .status()).isEqualTo(403);
        assertThat(request(loopback, "GET /api/fleet HTTP/1.1\r\nHost: fleet.example:8470\r\nConnection: close\r\n\r\n")
                .status()).isEqualTo(200);
        assertThat(request(loopback, "GET /api/fleet HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                .status()).isEqualTo(200);
    }

    @Test
    void aMissingOrMalformedHostIsABadRequest() throws IOException {
        RollcallConsole console = console(Map.of());

        assertThat(request(console, "GET /api/fleet HTTP/1.1\r\nConnection: close\r\n\r\n").status())
                .as("no Host").isEqualTo(400);
        assertThat(request(console, "GET /api/fleet HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n"
                + "Connection: close\r\n\r\n").status()).as("two Hosts").isEqualTo(400);
        for (String malformed : List.of("[::1", "127.0.0.1:99999", "127.0.0.1:", "127.0.0.1:8x", "a b",
                "[::1]x", "local_host", "[fe80::1%eth0]", "")) {
            Answer a = request(console, "GET /api/fleet HTTP/1.1\r\nHost: " + malformed + "\r\nConnection: close\r\n\r\n");
            assertThat(a.status()).as("Host '" + malformed + "'").isIn(400, 403);
        }
    }

    @Test
    void aRefusedHostIsQuotedEscapedAndBounded() throws IOException {
        RollcallConsole console = console(Map.of());
        // A C1 control (NEL) is legal in a header value to HTTP (obs-text), not in a host name.
        String hostile = "evil\u0085.example" + "x".repeat(5000);

        Answer a = request(console, "GET / HTTP/1.1\r\nHost: " + hostile + "\r\nConnection: close\r\n\r\n");

        assertThat(a.status()).isEqualTo(400);
        assertThat(a.body()).contains(PeerText.escape("evil\u0085"));
        assertThat(PeerText.isClean(a.body().strip())).as("no raw control character in: " + a.body()).isTrue();
        assertThat(a.body().length()).isLessThan(1000);
    }

    @Test
    void allowedHostsIsCheckedAtStartNamingTheKeyAndTheValue() {
        for (String bad : List.of("console.example:8470", "*.example", "bad host", "evil\u001b[31m.example",
                "[::1", "a..b")) {
            assertThatThrownBy(() -> console(Map.of("rollcall.console.allowed-hosts", "ok.example," + bad)))
                    .as(bad)
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("rollcall.console.allowed-hosts")
                    .hasMessageContaining(PeerText.escape(bad))
                    .satisfies(e -> assertThat(PeerText.isClean(e.getMessage())).isTrue());
        }
    }

    @Test
    void seventyStalledConnectionsDoNotKeepTheNextRequestFromBeingAnswered() throws Exception {
        RollcallConsole console = console(Map.of());
        List<Socket> stalled = stall(console, 70);

        // The bound is the test's patience, not a speed: the old console answered nothing at all.
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(console.uri().resolve("/api/fleet"))
                .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());

        assertThat(r.statusCode()).isIn(200, 503);
        if (r.statusCode() == 503) {
            assertThat(r.headers().firstValue("Retry-After")).isPresent();
        }
        assertThat(stalled).allSatisfy(s -> assertThat(s.isClosed()).isFalse());
    }

    @Test
    void stalledConnectionsAreClosedByTheServerAfterTheRequestTimeout() throws IOException {
        RollcallConsole console = console(Map.of("rollcall.console.request-timeout", "300ms"));
        List<Socket> stalled = stall(console, 8);
        try (Socket halfHead = new Socket()) {
            halfHead.connect(console.address(), 5000);
            // A request head that keeps coming, a header at a time, and never ends.
            halfHead.getOutputStream().write(("GET /api/fleet HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            stalled.add(halfHead);

            for (Socket s : stalled) {
                s.setSoTimeout(READ_LIMIT_MS);
                try {
                    InputStream in = s.getInputStream();
                    while (in.read() != -1) {
                        // whatever the server says before it closes
                    }
                } catch (SocketTimeoutException e) {
                    throw new AssertionError("the console still held a stalled connection after "
                            + READ_LIMIT_MS + " ms", e);
                } catch (IOException reset) {
                    // closed by the server: what is asked
                }
            }
        }
        assertThat(new HttpClientGet(console).status("/api/fleet")).isEqualTo(200);
    }

    @Test
    void anOversizedRequestHeadIsRefusedAndTheConnectionClosed() throws IOException {
        RollcallConsole console = console(Map.of());

        Answer a = request(console, "GET /api/fleet HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + "y".repeat(64 * 1024)
                + "\r\n\r\n");

        assertThat(a.status()).isEqualTo(431);
    }

    @Test
    void connectionsBeyondTheLimitAreTurnedAwayWithRetryAfter() throws IOException {
        RollcallConsole console = closer.add(RollcallConsole.builder(resolver).maxClients(1).start());
        stall(console, ConsoleServer.maxConnections(1));

        Answer a = request(console, "GET /api/fleet HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");

        assertThat(a.status()).isEqualTo(503);
        assertThat(a.head()).containsIgnoringCase("Retry-After: ");
    }

    /** {@code n} connections that each sent one byte of a request and then nothing. */
    private List<Socket> stall(RollcallConsole console, int n) throws IOException {
        List<Socket> sockets = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Socket s = closer.add(new Socket());
            s.connect(console.address(), 5000);
            s.getOutputStream().write('G');
            s.getOutputStream().flush();
            sockets.add(s);
        }
        return sockets;
    }

    record Answer(int status, String head, String body) {
    }

    /** Sends {@code raw} on a new connection and reads the answer until the server closes it. */
    private static Answer request(RollcallConsole console, String raw) throws IOException {
        return request(console.address(), raw);
    }

    private static Answer request(InetSocketAddress address, String raw) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(address, 5000);
            s.setSoTimeout(READ_LIMIT_MS);
            OutputStream out = s.getOutputStream();
            try {
                out.write(raw.getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                s.shutdownOutput();
            } catch (IOException refusedMidWrite) {
                // the server may answer and close before it has read all of an oversized head
            }
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            try {
                s.getInputStream().transferTo(got);
            } catch (SocketTimeoutException e) {
                throw new AssertionError("no answer, or the connection not closed, within " + READ_LIMIT_MS + " ms; got: "
                        + got.toString(StandardCharsets.ISO_8859_1), e);
            } catch (IOException reset) {
                // a reset after the answer (the server closed with our bytes unread)
            }
            String text = got.toString(StandardCharsets.UTF_8);
            int end = text.indexOf("\r\n\r\n");
            if (!text.startsWith("HTTP/1.1 ") || end < 0) {
                throw new AssertionError("not an HTTP answer: '" + text + "'");
            }
            return new Answer(Integer.parseInt(text.substring(9, 12)), text.substring(0, end), text.substring(end + 4));
        }
    }

    /** A plain JDK client's GET. */
    private record HttpClientGet(RollcallConsole console) {
        int status(String path) {
            try {
                return HttpClient.newHttpClient().send(HttpRequest.newBuilder(console.uri().resolve(path))
                        .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode();
            } catch (IOException e) {
                throw new AssertionError(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
