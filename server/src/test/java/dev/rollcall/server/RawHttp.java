package dev.rollcall.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/1.1 over a plain socket, for what {@link java.net.http.HttpClient} will not send: a forged
 * {@code Host}, an oversized head, a method of any name. One request per connection, read until the
 * server closes it.
 */
final class RawHttp {

    /** Generous: a read that gets nothing for this long means the server holds the connection. */
    private static final int READ_LIMIT_MS = 10_000;

    private RawHttp() {
    }

    /** An answer: status, the head as sent (header names in any case), the body. */
    record Answer(int status, String head, String body) {

        /** The value of header {@code name} (case-insensitive), or {@code null}. */
        String header(String name) {
            for (String line : head.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return null;
        }
    }

    /** {@code method path} with {@code Host: host} and {@code Connection: close}, plus {@code extraHeaders} lines. */
    static Answer send(InetSocketAddress to, String method, String path, String host, String... extraHeaders)
            throws IOException {
        StringBuilder raw = new StringBuilder(method + " " + path + " HTTP/1.1\r\n");
        if (host != null) {
            raw.append("Host: ").append(host).append("\r\n");
        }
        for (String h : extraHeaders) {
            raw.append(h).append("\r\n");
        }
        raw.append("Connection: close\r\n\r\n");
        return sendRaw(to, raw.toString());
    }

    static Answer get(InetSocketAddress to, String path, String host) throws IOException {
        return send(to, "GET", path, host);
    }

    /** Sends {@code raw} on a new connection and reads the answer until the server closes it. */
    static Answer sendRaw(InetSocketAddress to, String raw) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(to, 5000);
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
            int status = Integer.parseInt(text.substring(9, 12));
            return new Answer(status, text.substring(0, end), text.substring(end + 4));
        }
    }
}
