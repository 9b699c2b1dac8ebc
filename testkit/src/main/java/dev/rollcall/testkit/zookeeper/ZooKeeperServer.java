package dev.rollcall.testkit.zookeeper;

import dev.rollcall.local.internal.ServerCleanup;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.zookeeper.server.ServerCnxnFactory;

/**
 * A real single ZooKeeper server (Apache ZooKeeper, from Maven Central) running in this JVM on a
 * free loopback port, for tests: Rollcall's and yours.
 *
 * <pre>{@code
 * try (ZooKeeperServer zk = ZooKeeperServer.start()) {
 *     String connect = zk.connectString();    // 127.0.0.1:<free port>
 *     zk.expireSession(sessionId);            // that client's session ends: its ephemeral nodes go
 *     zk.stop();                              // ZooKeeper is down: connections drop, calls fail
 *     zk.restart();                           // same port, same data and sessions
 * }
 * }</pre>
 *
 * <p>Its tick is 100 ms, so session timeouts from 200 ms to 60 s are granted as asked. Data lives in
 * a temporary directory that {@link #restart()} keeps and {@link #close()} deletes. The admin HTTP
 * server is not started. Thread-safe; a JVM shutdown hook stops it if a test run dies before closing it.
 */
public final class ZooKeeperServer implements AutoCloseable {

    private static final int TICK_MILLIS = 100;

    private final Path home;
    private final int port;
    private final Thread shutdownHook;
    private org.apache.zookeeper.server.ZooKeeperServer server;   // guarded by this
    private ServerCnxnFactory connections;                        // guarded by this
    private boolean closed;                                       // guarded by this

    private ZooKeeperServer(Path home, int port) {
        this.home = home;
        this.port = port;
        this.shutdownHook = new Thread(this::stopQuietly, "rollcall-zookeeper-server-cleanup");
    }

    /** Starts a new, empty ZooKeeper on a free loopback port; it accepts connections when this returns. */
    public static ZooKeeperServer start() {
        System.setProperty("zookeeper.admin.enableServer", "false");
        Path home;
        try {
            home = Files.createTempDirectory("rollcall-zookeeper-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a data directory for ZooKeeper", e);
        }
        ZooKeeperServer zk = new ZooKeeperServer(home, freePort());
        Runtime.getRuntime().addShutdownHook(zk.shutdownHook);
        try {
            zk.launch();
        } catch (RuntimeException e) {
            zk.close();
            throw e;
        }
        return zk;
    }

    /** {@code 127.0.0.1:<port>}: a value for {@code rollcall.discovery.zookeeper.connect}. */
    public String connectString() {
        return "127.0.0.1:" + port;
    }

    /** The client port. */
    public int port() {
        return port;
    }

    /** Whether the server is serving. */
    public synchronized boolean isRunning() {
        return server != null && server.isRunning();
    }

    /** The ids of the sessions the server knows, live or not yet expired. */
    public synchronized Set<Long> sessions() {
        Set<Long> ids = new TreeSet<>();
        if (server != null) {
            server.getSessionExpiryMap().values().forEach(ids::addAll);
        }
        return ids;
    }

    /**
     * Ends session {@code sessionId} on the server, as its expiry does: its ephemeral nodes are
     * deleted, its connection is closed, and its client learns on reconnecting that it expired.
     */
    public synchronized void expireSession(long sessionId) {
        if (server == null) {
            throw new IllegalStateException("ZooKeeper " + connectString() + " is stopped");
        }
        server.closeSession(sessionId);
    }

    /** Stops the server, keeping its data and port for {@link #restart()}. Clients lose their connections. Idempotent. */
    public synchronized void stop() {
        if (connections != null) {
            connections.shutdown();
            connections = null;
        }
        if (server != null) {
            server.shutdown();
            server = null;
        }
    }

    /**
     * Starts the server again on the same port with the same data (stopping it first if it runs).
     * Nodes and sessions survive; a session whose client does not come back within its timeout
     * expires then, as ZooKeeper does.
     */
    public synchronized void restart() {
        if (closed) {
            throw new IllegalStateException("ZooKeeper " + connectString() + " is closed");
        }
        stop();
        launch();
    }

    /** Stops the server and deletes its data. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        stopQuietly();
        ServerCleanup.removeShutdownHook(shutdownHook);
        ServerCleanup.deleteTree(home);
    }

    @Override
    public String toString() {
        return "ZooKeeperServer[" + connectString() + (isRunning() ? "" : ", stopped") + "]";
    }

    private synchronized void launch() {
        File data = home.resolve("data").toFile();
        try {
            org.apache.zookeeper.server.ZooKeeperServer s = new org.apache.zookeeper.server.ZooKeeperServer(data, data,
                    TICK_MILLIS);
            s.setMinSessionTimeout(2 * TICK_MILLIS);
            s.setMaxSessionTimeout(60_000);
            ServerCnxnFactory f = ServerCnxnFactory.createFactory(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 100);
            f.startup(s);
            server = s;
            connections = f;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start ZooKeeper on " + connectString() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting ZooKeeper", e);
        }
    }

    private void stopQuietly() {
        try {
            stop();
        } catch (RuntimeException e) {
            // best effort at shutdown
        }
    }

    /** A free port below the ephemeral range, so that a restart can always rebind it. */
    private static int freePort() {
        for (int attempt = 0; attempt < 200; attempt++) {
            int p = ThreadLocalRandom.current().nextInt(20_000, 32_000);
            try (ServerSocket s = new ServerSocket()) {
                s.setReuseAddress(true);
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), p), 1);
                return p;
            } catch (IOException inUse) {
                // try another
            }
        }
        throw new IllegalStateException("no free loopback port after 200 tries");
    }
}
