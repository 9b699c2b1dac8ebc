package dev.rollcall.worker;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback that can cut every connection through it at once, the way a broken
 * network or a killed coordinator host does (RST, no gRPC goodbye). The testkit's FaultProxy does
 * more, but testkit depends on this module. Threads {@code cut-proxy-*}, daemons.
 */
final class CutProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    CutProxy(int targetPort) throws IOException {
        this.target = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "cut-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    int port() {
        return listener.getLocalPort();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target), 5_000);
                sockets.add(client);
                sockets.add(server);
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private static void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // cut, or the other side ended
            }
        }, "cut-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Resets every connection through the proxy (SO_LINGER 0: an RST to each side). */
    void cut() {
        for (Socket s : sockets) {
            try {
                s.setSoLinger(true, 0);
                s.close();
            } catch (IOException e) {
                // already closed
            }
        }
        sockets.clear();
    }

    @Override
    public void close() throws IOException {
        listener.close();
        cut();
    }
}
