package dev.rollcall.worker;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A client that opens an HTTP/2 connection to a gRPC server and then goes silent with its socket
 * open, the way a peer behind a cut-off host or deep in a GC pause does: it sent its preface and
 * settings and read the server's first frame, and from then on never reads, answers or closes.
 */
final class SilentHttp2Peer implements AutoCloseable {

    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    /** An empty SETTINGS frame: length 0, type 4, no flags, stream 0. */
    private static final byte[] SETTINGS = {0, 0, 0, 4, 0, 0, 0, 0, 0};

    private final Socket socket;

    private SilentHttp2Peer(Socket socket) {
        this.socket = socket;
    }

    /** Connects to {@code port} on loopback and returns once the server has answered with a frame. */
    static SilentHttp2Peer connect(int port) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000);
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            out.write(PREFACE);
            out.write(SETTINGS);
            out.flush();
            new DataInputStream(socket.getInputStream()).readFully(new byte[9]); // the server's SETTINGS header
            return new SilentHttp2Peer(socket);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
