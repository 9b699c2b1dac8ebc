package dev.rollcall.testkit.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FaultProxyTest {

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    /** A server that answers every line with its name and the line. */
    private EchoServer echo(String name) throws IOException {
        EchoServer s = new EchoServer(name);
        open.add(s);
        return s;
    }

    private FaultProxy proxy(EchoServer server) {
        FaultProxy p = FaultProxy.to(server.port());
        open.add(p);
        return p;
    }

    private Socket connect(FaultProxy proxy) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
        s.setSoTimeout(2_000);
        open.add(s);
        return s;
    }

    private static String ask(Socket s, String line) throws IOException {
        s.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
        s.getOutputStream().flush();
        return readLine(s.getInputStream());
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            if (c < 0) {
                return null;
            }
            sb.append((char) c);
        }
        return sb.toString();
    }

    @Test
    void passesBytesBothWays() throws IOException {
        FaultProxy proxy = proxy(echo("a"));
        Socket s = connect(proxy);
        assertThat(ask(s, "hello")).isEqualTo("a hello");
        assertThat(ask(s, "again")).isEqualTo("a again");
        assertThat(proxy.openConnections()).isEqualTo(1);
    }

    @Test
    void aBlackholeHoldsOpenConnectionsSilentWithoutClosingThemAndPassHealsIt() throws IOException {
        FaultProxy proxy = proxy(echo("a"));
        Socket s = connect(proxy);
        assertThat(ask(s, "before")).isEqualTo("a before");

        proxy.blackhole();
        s.setSoTimeout(300);
        s.getOutputStream().write("during\n".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> readLine(s.getInputStream())).isInstanceOf(SocketTimeoutException.class);
        assertThat(s.isClosed()).isFalse();
        assertThat(proxy.openConnections()).isEqualTo(1);

        proxy.pass();
        s.setSoTimeout(2_000);
        assertThat(readLine(s.getInputStream())).isEqualTo("a during"); // held, then delivered
    }

    @Test
    void aBlackholeAcceptsNewConnectionsAndTellsThemNothing() throws IOException {
        EchoServer server = echo("a");
        FaultProxy proxy = proxy(server);
        proxy.blackhole();
        Socket s = connect(proxy);
        s.setSoTimeout(300);
        s.getOutputStream().write("hello\n".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> readLine(s.getInputStream())).isInstanceOf(SocketTimeoutException.class);
        assertThat(server.accepted()).isZero();

        proxy.pass();
        s.setSoTimeout(2_000);
        assertThat(readLine(s.getInputStream())).isEqualTo("a hello");
    }

    @Test
    void resetConnectionsEndsOpenOnesWithAResetAndLetsNewOnesThrough() throws IOException {
        FaultProxy proxy = proxy(echo("a"));
        Socket s = connect(proxy);
        assertThat(ask(s, "x")).isEqualTo("a x");

        proxy.resetConnections();
        assertThatThrownBy(() -> {
            for (int i = 0; i < 100; i++) { // the RST arrives by itself; a write or a read then fails
                s.getOutputStream().write("y\n".getBytes(StandardCharsets.UTF_8));
                if (s.getInputStream().read() < 0) {
                    throw new IOException("EOF instead of a reset");
                }
            }
        }).isInstanceOf(SocketException.class);
        assertThat(ask(connect(proxy), "z")).isEqualTo("a z");
    }

    @Test
    void halfCloseSendsTheClientAFin() throws IOException {
        FaultProxy proxy = proxy(echo("a"));
        Socket s = connect(proxy);
        assertThat(ask(s, "x")).isEqualTo("a x");

        proxy.halfClose();
        assertThat(s.getInputStream().read()).isEqualTo(-1);
    }

    @Test
    void redirectedNewConnectionsReachTheSuccessorWhileOpenOnesKeepTheirServer() throws IOException {
        FaultProxy proxy = proxy(echo("old"));
        Socket before = connect(proxy);
        assertThat(ask(before, "1")).isEqualTo("old 1");

        proxy.redirectNewConnections(new InetSocketAddress(InetAddress.getLoopbackAddress(), echo("new").port()));
        Socket after = connect(proxy);
        assertThat(ask(after, "2")).isEqualTo("new 2");
        assertThat(ask(before, "3")).isEqualTo("old 3");
    }

    @Test
    void delayHoldsEveryByteForTheDelay() throws IOException {
        FaultProxy proxy = proxy(echo("a"));
        Socket s = connect(proxy);
        proxy.delay(Duration.ofMillis(300));
        long start = System.nanoTime();
        assertThat(ask(s, "slow")).isEqualTo("a slow");
        // Both ways: at least twice the delay. A lower bound only: how long it takes is not asserted.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(600));
    }

    @Test
    void aClientThatClosesEndsItsConnection() throws IOException {
        FaultProxy proxy = proxy(echo("a"));
        Socket s = connect(proxy);
        assertThat(ask(s, "x")).isEqualTo("a x");
        s.close();
        await().atMost(Duration.ofSeconds(5)).until(() -> proxy.openConnections() == 0);
    }

    @Test
    void refusesTargetsOutsideLoopback() {
        assertThatThrownBy(() -> FaultProxy.to(new InetSocketAddress("192.0.2.1", 80)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a loopback address");
    }

    @Test
    void theDatagramProxyRelaysAndDropsWhenBlackholed() throws IOException {
        DatagramSocket server = udpEcho(0);
        DatagramFaultProxy proxy = DatagramFaultProxy.to(server.getLocalPort());
        open.add(proxy);
        DatagramSocket client = udpClient();
        InetSocketAddress to = new InetSocketAddress(InetAddress.getLoopbackAddress(), proxy.port());

        client.send(new DatagramPacket(new byte[] {1, 2, 3}, 3, to));
        DatagramPacket answer = new DatagramPacket(new byte[16], 16);
        client.receive(answer);
        assertThat(answer.getLength()).isEqualTo(3);

        proxy.blackhole();
        client.setSoTimeout(300);
        client.send(new DatagramPacket(new byte[] {4}, 1, to));
        assertThatThrownBy(() -> client.receive(new DatagramPacket(new byte[16], 16)))
                .isInstanceOf(SocketTimeoutException.class);
        assertThat(proxy.dropped()).isEqualTo(1);
    }

    @Test
    void theDatagramProxyDropsOnlyTheClientDatagramsItIsToldToUntilPass() throws IOException {
        DatagramSocket server = udpEcho(0);
        DatagramFaultProxy proxy = DatagramFaultProxy.to(server.getLocalPort());
        open.add(proxy);
        DatagramSocket client = udpClient();
        InetSocketAddress to = new InetSocketAddress(InetAddress.getLoopbackAddress(), proxy.port());

        proxy.dropFromClients(datagram -> datagram[0] == 9);
        client.send(new DatagramPacket(new byte[] {9}, 1, to));
        client.send(new DatagramPacket(new byte[] {1}, 1, to));
        DatagramPacket answer = new DatagramPacket(new byte[16], 16);
        client.receive(answer);
        assertThat(answer.getData()[0]).as("the first answer is to the datagram not dropped").isEqualTo((byte) 1);
        assertThat(proxy.dropped()).isEqualTo(1);

        proxy.pass();
        client.send(new DatagramPacket(new byte[] {9}, 1, to));
        client.receive(answer);
        assertThat(answer.getData()[0]).isEqualTo((byte) 9);
    }

    @Test
    void faultProxiesPutTcpAndUdpOnOnePortAndSilenceThemTogether() throws IOException {
        // A server on one port number for both, as a DNS server is.
        EchoServer tcpServer = null;
        DatagramSocket udpServer = null;
        for (int i = 0; i < 20 && tcpServer == null; i++) {
            DatagramSocket candidate = udpEcho(0);
            try {
                tcpServer = new EchoServer("t", candidate.getLocalPort());
                open.add(tcpServer);
                udpServer = candidate;
            } catch (IOException taken) {
                candidate.close();
            }
        }
        assertThat(udpServer).as("a port free for TCP and UDP").isNotNull();
        FaultProxies proxies = new FaultProxies();
        open.add(proxies);

        int port = proxies.tcpAndUdp(udpServer.getLocalPort());

        assertThat(proxies.ports()).containsExactly(port);
        Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
        open.add(s);
        s.setSoTimeout(2_000);
        assertThat(ask(s, "over tcp")).isEqualTo("t over tcp");
        DatagramSocket client = udpClient();
        InetSocketAddress to = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
        client.send(new DatagramPacket(new byte[] {7}, 1, to));
        DatagramPacket answer = new DatagramPacket(new byte[16], 16);
        client.receive(answer);
        assertThat(answer.getData()[0]).isEqualTo((byte) 7);

        proxies.blackhole();
        s.setSoTimeout(300);
        s.getOutputStream().write("held\n".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> readLine(s.getInputStream())).isInstanceOf(SocketTimeoutException.class);
        client.setSoTimeout(300);
        client.send(new DatagramPacket(new byte[] {8}, 1, to));
        assertThatThrownBy(() -> client.receive(new DatagramPacket(new byte[16], 16)))
                .isInstanceOf(SocketTimeoutException.class);

        proxies.pass();
        s.setSoTimeout(2_000);
        assertThat(readLine(s.getInputStream())).isEqualTo("t held");
    }

    private DatagramSocket udpClient() throws IOException {
        DatagramSocket client = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        open.add(client);
        client.setSoTimeout(2_000);
        return client;
    }

    /** A UDP server on loopback {@code port} (0: a free one) that sends every datagram back. */
    private DatagramSocket udpEcho(int port) throws IOException {
        DatagramSocket server = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        open.add(server);
        Thread echo = new Thread(() -> {
            byte[] buf = new byte[512];
            while (!server.isClosed()) {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                try {
                    server.receive(p);
                    server.send(new DatagramPacket(p.getData(), p.getLength(), p.getSocketAddress()));
                } catch (IOException closed) {
                    return;
                }
            }
        }, "udp-echo");
        echo.setDaemon(true);
        echo.start();
        return server;
    }

    /** Answers each line with "name line"; counts connections. */
    private static final class EchoServer implements AutoCloseable {
        private final ServerSocket socket;
        private final String name;
        private final List<Socket> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();

        EchoServer(String name) throws IOException {
            this(name, 0);
        }

        EchoServer(String name, int port) throws IOException {
            this.socket = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
            this.name = name;
            Thread t = new Thread(this::serve, "echo-" + name);
            t.setDaemon(true);
            t.start();
        }

        int port() {
            return socket.getLocalPort();
        }

        int accepted() {
            return accepted.size();
        }

        private void serve() {
            while (!socket.isClosed()) {
                try {
                    Socket s = socket.accept();
                    accepted.add(s);
                    Thread t = new Thread(() -> answer(s), "echo-" + name + "-conn");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException closed) {
                    return;
                }
            }
        }

        private void answer(Socket s) {
            try (s) {
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                for (String line = readLine(in); line != null; line = readLine(in)) {
                    out.write((name + " " + line + "\n").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            } catch (IOException ended) {
                // the client went away
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
            for (Socket s : accepted) {
                s.close();
            }
        }
    }
}
