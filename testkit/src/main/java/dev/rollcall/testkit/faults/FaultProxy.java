package dev.rollcall.testkit.faults;

import dev.rollcall.api.WorkerEndpoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy on loopback that makes the faults a network makes, between a client and a server
 * that are both on this machine: the client connects to {@link #port()}, the proxy connects on to the
 * target and copies bytes both ways until told otherwise.
 *
 * <table>
 *   <caption>Faults</caption>
 *   <tr><th>call</th><th>what the peers see</th><th>as in production</th></tr>
 *   <tr><td>{@link #pass()}</td><td>a working link (the default)</td><td></td></tr>
 *   <tr><td>{@link #blackhole()}</td><td>no byte moves either way on any connection, open or new;
 *       sockets stay open, no FIN, no RST; new connections are accepted and then hear nothing</td>
 *       <td>a host cut off (power loss, partition, a proxy that stops forwarding)</td></tr>
 *   <tr><td>{@link #delay(Duration)}</td><td>every byte arrives this much later</td><td>a slow or
 *       congested link</td></tr>
 *   <tr><td>{@link #resetConnections()}</td><td>every open connection ends with a RST on both
 *       sides</td><td>a middlebox dropping its state, a crashed peer's kernel</td></tr>
 *   <tr><td>{@link #halfClose()}</td><td>every open connection gets a FIN towards the client (and
 *       towards the server); what the client still sends is read and dropped</td><td>a peer that
 *       shut its side down and lingers</td></tr>
 *   <tr><td>{@link #redirectNewConnections(InetSocketAddress)}</td><td>open connections stay with
 *       the old server, new ones reach another</td><td>a hot restart with {@code SO_REUSEPORT}, a
 *       layer-4 balancer, a NAT</td></tr>
 * </table>
 * Faults combine: a blackhole after a redirect holds the new server's connections too;
 * {@link #pass()} heals a blackhole (held bytes then flow, as after a partition) and clears the delay,
 * but keeps the redirect.
 *
 * <pre>{@code
 * try (FaultProxy proxy = FaultProxy.to(worker.endpoint())) {
 *     resolver = WorkerResolver.builder().discovery(StaticWorkerDiscovery.of(proxy.endpoint()))...;
 *     proxy.blackhole();   // the worker's host drops off the network
 * }
 * }</pre>
 *
 * <p>Thread-safe. Each connection uses four daemon threads ({@code rollcall-fault-proxy-<port>-...});
 * {@link #close()} stops every one and closes every socket. Meant for tests: it copies bytes through
 * the JVM, at loopback speed but not at the kernel's.
 */
public final class FaultProxy implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FaultProxy.class);
    private static final int CHUNK = 64 * 1024;
    /** Bytes read but not yet written, per direction: reading stops beyond this, as a full socket buffer does. */
    private static final int MAX_BUFFERED = 4 * 1024 * 1024;

    private final ServerSocket listener;
    private final Thread acceptor;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicLong connectionIds = new AtomicLong();
    // Guarded by lock.
    private InetSocketAddress target;
    private boolean blackholed;
    private long delayNanos;
    private volatile boolean closed;

    private FaultProxy(InetSocketAddress target, int listenPort) throws IOException {
        this.target = target;
        this.listener = new ServerSocket();
        this.listener.setReuseAddress(true);
        try {
            this.listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), listenPort), 200);
        } catch (IOException e) {
            this.listener.close();
            throw e;
        }
        this.acceptor = daemon(this::acceptForever, "accept");
        this.acceptor.start();
    }

    /** A proxy on a free loopback port in front of {@code target}, passing everything. */
    public static FaultProxy to(InetSocketAddress target) {
        Objects.requireNonNull(target, "target");
        requireLoopback(target);
        try {
            return new FaultProxy(target, 0);
        } catch (IOException e) {
            throw new UncheckedIOException("fault proxy: cannot listen on loopback", e);
        }
    }

    /**
     * A proxy listening on loopback port {@code listenPort} in front of {@code target}: for
     * {@link FaultProxies#tcpAndUdp}, which needs one port number for TCP and UDP alike.
     *
     * @throws IOException when that port is taken
     */
    static FaultProxy listeningOn(int listenPort, InetSocketAddress target) throws IOException {
        Objects.requireNonNull(target, "target");
        requireLoopback(target);
        return new FaultProxy(target, listenPort);
    }

    /** A proxy in front of the worker at {@code endpoint} (plaintext or TLS alike: bytes are bytes). */
    public static FaultProxy to(WorkerEndpoint endpoint) {
        return to(new InetSocketAddress(endpoint.host(), endpoint.port()));
    }

    /** A proxy in front of {@code port} on the loopback address. */
    public static FaultProxy to(int port) {
        return to(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    }

    /** The port clients connect to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** {@code 127.0.0.1:port}, for clients that take an address. */
    public String hostAndPort() {
        return "127.0.0.1:" + port();
    }

    /** The proxy as a plaintext worker endpoint, {@code grpc://127.0.0.1:port}. */
    public WorkerEndpoint endpoint() {
        return WorkerEndpoint.of("127.0.0.1", port());
    }

    /** Copy everything at once from now on: heals {@link #blackhole()} and {@link #delay}; a redirect stays. */
    public void pass() {
        update(() -> {
            blackholed = false;
            delayNanos = 0;
        });
    }

    /** From now on no byte moves on any connection, open or new, and no socket closes. */
    public void blackhole() {
        update(() -> blackholed = true);
    }

    /** From now on every byte is copied {@code delay} after it arrived ({@link Duration#ZERO}: at once). */
    public void delay(Duration delay) {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay " + delay + " is negative");
        }
        update(() -> delayNanos = delay.toNanos());
    }

    /** New connections go to {@code successor} from now on; open ones keep their server. */
    public void redirectNewConnections(InetSocketAddress successor) {
        Objects.requireNonNull(successor, "successor");
        requireLoopback(successor);
        update(() -> target = successor);
    }

    /** {@link #redirectNewConnections(InetSocketAddress)} to the worker at {@code endpoint}. */
    public void redirectNewConnections(WorkerEndpoint endpoint) {
        redirectNewConnections(new InetSocketAddress(endpoint.host(), endpoint.port()));
    }

    /** Ends every open connection with a RST to both its client and its server; new ones are unaffected. */
    public void resetConnections() {
        for (Link link : links) {
            link.reset();
        }
    }

    /**
     * Sends a FIN to the client and to the server of every open connection, and drops whatever
     * either still sends; the sockets stay open until the peers close them or the proxy closes.
     */
    public void halfClose() {
        for (Link link : links) {
            link.halfClose();
        }
    }

    /** Connections open now (accepted and not yet ended). */
    public int openConnections() {
        return links.size();
    }

    /** Connections accepted since the proxy started. */
    public int connectionsAccepted() {
        return accepted.get();
    }

    /** Stops listening and closes every connection (with a RST, so that no port lingers). */
    @Override
    public void close() {
        closed = true;
        update(() -> { });
        try {
            listener.close();
        } catch (IOException e) {
            log.debug("fault proxy {}: closing the listener", port(), e);
        }
        for (Link link : links) {
            link.reset();
        }
        try {
            acceptor.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        lock.lock();
        try {
            return "FaultProxy[:" + port() + " -> " + target + (blackholed ? ", blackholed" : "")
                    + (delayNanos > 0 ? ", delay " + Duration.ofNanos(delayNanos) : "") + ", "
                    + links.size() + " open]";
        } finally {
            lock.unlock();
        }
    }

    private void update(Runnable change) {
        lock.lock();
        try {
            change.run();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private static void requireLoopback(InetSocketAddress address) {
        if (address.getAddress() == null || !address.getAddress().isLoopbackAddress()) {
            throw new IllegalArgumentException("fault proxy: " + address + " is not a loopback address");
        }
    }

    private Thread daemon(Runnable body, String what) {
        Thread t = new Thread(body, "rollcall-fault-proxy-" + listener.getLocalPort() + "-" + what);
        t.setDaemon(true);
        return t;
    }

    private void acceptForever() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                if (!closed) {
                    log.warn("fault proxy {} stopped accepting", port(), e);
                }
                return;
            }
            accepted.incrementAndGet();
            InetSocketAddress to;
            lock.lock();
            try {
                to = target;
            } finally {
                lock.unlock();
            }
            long id = connectionIds.incrementAndGet();
            Thread connector = daemon(() -> connect(id, client, to), id + "-connect");
            connector.start();
        }
    }

    /** Connects on to the server; while blackholed, the client is held first, as a silent host holds it. */
    private void connect(long id, Socket client, InetSocketAddress to) {
        Link link = new Link(id, client);
        links.add(link);
        try {
            if (!awaitFlowing(link)) {
                return;
            }
            Socket server = new Socket();
            server.setTcpNoDelay(true);
            client.setTcpNoDelay(true);
            server.connect(to, 5_000);
            link.started(server);
        } catch (IOException e) {
            log.debug("fault proxy {}: connection {} to {} failed: {}", port(), id, to, e.toString());
            link.reset();
        }
    }

    /** Waits while blackholed; false when the link or the proxy ended meanwhile. */
    private boolean awaitFlowing(Link link) {
        lock.lock();
        try {
            while (blackholed && !closed && !link.ended) {
                changed.awaitUninterruptibly();
            }
            return !closed && !link.ended;
        } finally {
            lock.unlock();
        }
    }

    /** One client connection and the server connection it is copied to. */
    private final class Link {
        final long id;
        final Socket client;
        volatile Socket server;
        volatile boolean ended;
        volatile boolean halfClosed;
        private final AtomicInteger pumpsLeft = new AtomicInteger(2);

        Link(long id, Socket client) {
            this.id = id;
            this.client = client;
        }

        void started(Socket server) throws IOException {
            this.server = server;
            if (ended) {
                reset();
                return;
            }
            Direction up = new Direction(client, server);
            Direction down = new Direction(server, client);
            up.start("up");
            down.start("down");
        }

        void reset() {
            if (ended) {
                return;
            }
            ended = true;
            abort(client);
            Socket s = server;
            if (s != null) {
                abort(s);
            }
            links.remove(this);
            update(() -> { }); // wakes pumps and connectors waiting on the mode
        }

        void halfClose() {
            halfClosed = true;
            Socket s = server;
            try {
                client.shutdownOutput();
                if (s != null) {
                    s.shutdownOutput();
                }
            } catch (IOException e) {
                log.debug("fault proxy {}: half-closing connection {}", port(), id, e);
            }
            update(() -> { });
        }

        /** A pump ended (its peer closed or failed): once both have, the link is over. */
        void pumpEnded() {
            if (pumpsLeft.decrementAndGet() == 0 && !ended) {
                ended = true;
                close(client);
                Socket s = server;
                if (s != null) {
                    close(s);
                }
                links.remove(this);
            }
        }

        private void abort(Socket s) {
            try {
                s.setSoLinger(true, 0); // close() then sends a RST
            } catch (SocketException e) {
                log.trace("fault proxy: SO_LINGER", e);
            }
            close(s);
        }

        private void close(Socket s) {
            try {
                s.close();
            } catch (IOException e) {
                log.trace("fault proxy: close", e);
            }
        }

        /**
         * One direction of the link: a reader that stamps each chunk with when it may be written,
         * and a writer that writes it then, both holding still while the proxy is blackholed.
         */
        private final class Direction {
            private final InputStream in;
            private final Socket to;
            private final OutputStream out;
            private final ArrayDeque<Chunk> queue = new ArrayDeque<>(); // guarded by lock
            private int buffered;                                       // guarded by lock
            private boolean eof;                                        // guarded by lock

            Direction(Socket from, Socket to) throws IOException {
                this.in = from.getInputStream();
                this.to = to;
                this.out = to.getOutputStream();
            }

            void start(String name) {
                daemon(this::read, id + "-" + name + "-read").start();
                daemon(this::write, id + "-" + name + "-write").start();
            }

            private void read() {
                byte[] buffer = new byte[CHUNK];
                try {
                    while (true) {
                        lock.lock();
                        try {
                            while (!ended && (blackholed || buffered >= MAX_BUFFERED)) {
                                changed.awaitUninterruptibly();
                            }
                            if (ended) {
                                return;
                            }
                        } finally {
                            lock.unlock();
                        }
                        int n = in.read(buffer);
                        lock.lock();
                        try {
                            if (n < 0) {
                                eof = true;
                            } else if (!halfClosed) {
                                long due = System.nanoTime() + delayNanos;
                                Chunk last = queue.peekLast();
                                queue.add(new Chunk(Arrays.copyOf(buffer, n), last == null ? due : Math.max(due, last.due)));
                                buffered += n;
                            }
                            changed.signalAll();
                        } finally {
                            lock.unlock();
                        }
                        if (n < 0) {
                            return;
                        }
                    }
                } catch (IOException e) {
                    lock.lock();
                    try {
                        eof = true;
                        changed.signalAll();
                    } finally {
                        lock.unlock();
                    }
                }
            }

            private void write() {
                try {
                    while (true) {
                        Chunk next;
                        lock.lock();
                        try {
                            while (true) {
                                if (ended) {
                                    return;
                                }
                                Chunk head = queue.peek();
                                if (head == null) {
                                    if (eof) {
                                        break;
                                    }
                                    changed.awaitUninterruptibly();
                                    continue;
                                }
                                long wait = head.due - System.nanoTime();
                                if (blackholed) {
                                    changed.awaitUninterruptibly();
                                } else if (wait > 0) {
                                    changed.awaitNanos(wait);
                                } else {
                                    break;
                                }
                            }
                            next = queue.poll();
                            if (next != null) {
                                buffered -= next.bytes.length;
                                changed.signalAll();
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return;
                        } finally {
                            lock.unlock();
                        }
                        if (next == null) { // the sender closed and everything it sent is written: pass its FIN on
                            if (!halfClosed) {
                                shutdownOutput();
                            }
                            return;
                        }
                        out.write(next.bytes);
                        out.flush();
                    }
                } catch (IOException e) {
                    log.trace("fault proxy {}: connection {} write ended: {}", port(), id, e.toString());
                } finally {
                    pumpEnded();
                }
            }

            private void shutdownOutput() {
                try {
                    if (!to.isOutputShutdown() && !to.isClosed()) {
                        to.shutdownOutput();
                    }
                } catch (IOException e) {
                    log.trace("fault proxy: shutdownOutput", e);
                }
            }
        }
    }

    private record Chunk(byte[] bytes, long due) {
    }
}
