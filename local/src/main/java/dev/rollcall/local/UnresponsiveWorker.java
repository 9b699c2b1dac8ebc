package dev.rollcall.local;

import dev.rollcall.api.WorkerEndpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A "worker" that accepts TCP connections on loopback and never answers a byte: the hung process a
 * coordinator must not wait for beyond its probe deadline.
 *
 * <p>Thread-safe. One daemon thread ({@code rollcall-local-unresponsive-N}) accepts connections;
 * {@link #close()} closes the listening socket and every accepted connection.
 */
public final class UnresponsiveWorker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(UnresponsiveWorker.class);
    private static final AtomicInteger COUNT = new AtomicInteger();

    private final ServerSocket server;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    private UnresponsiveWorker(ServerSocket server) {
        this.server = server;
        this.acceptor = new Thread(this::acceptForever, "rollcall-local-unresponsive-" + COUNT.incrementAndGet());
        this.acceptor.setDaemon(true);
        this.acceptor.start();
    }

    /** Listens on a free loopback port. */
    public static UnresponsiveWorker start() {
        try {
            return new UnresponsiveWorker(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on loopback", e);
        }
    }

    /** Where it listens. */
    public WorkerEndpoint endpoint() {
        return WorkerEndpoint.of("127.0.0.1", server.getLocalPort());
    }

    /** How many connections it has accepted (and ignored). */
    public int connectionsAccepted() {
        return accepted.size();
    }

    private void acceptForever() {
        while (!server.isClosed()) {
            try {
                accepted.add(server.accept());
            } catch (IOException e) {
                if (!server.isClosed()) {
                    log.warn("unresponsive worker on port {} stopped accepting", server.getLocalPort(), e);
                }
                return;
            }
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            log.debug("closing listening socket", e);
        }
        for (Socket s : accepted) {
            try {
                s.close();
            } catch (IOException e) {
                log.debug("closing accepted socket", e);
            }
        }
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
