package dev.rollcall.testkit.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The UDP half of {@link FaultProxy}, for datagram protocols (DNS): relays datagrams between clients
 * and one server on loopback, and drops or delays them on demand. A {@link #blackhole()} is a server
 * whose host went silent: questions go unanswered, nothing says so.
 *
 * <p>Thread-safe. One daemon thread reads clients' datagrams, one per client reads the server's
 * answers, one delivers delayed datagrams ({@code rollcall-fault-proxy-udp-<port>-...});
 * {@link #close()} stops them all.
 */
public final class DatagramFaultProxy implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DatagramFaultProxy.class);

    private final InetSocketAddress target;
    private final DatagramSocket listener;
    private final Map<SocketAddress, DatagramSocket> upstreams = new ConcurrentHashMap<>();
    private final ScheduledExecutorService later;
    private final AtomicLong dropped = new AtomicLong();
    private volatile boolean blackholed;
    private volatile Predicate<byte[]> dropFromClients = datagram -> false;
    private volatile long delayNanos;
    private volatile boolean closed;

    private DatagramFaultProxy(InetSocketAddress target, int listenPort) throws IOException {
        this.target = target;
        this.listener = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), listenPort));
        String prefix = "rollcall-fault-proxy-udp-" + listener.getLocalPort();
        this.later = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, prefix + "-delay"));
        daemon(this::relayQuestions, prefix + "-in").start();
    }

    /** A relay on a free loopback port in front of the UDP server at {@code target}, passing everything. */
    public static DatagramFaultProxy to(InetSocketAddress target) {
        Objects.requireNonNull(target, "target");
        if (target.getAddress() == null || !target.getAddress().isLoopbackAddress()) {
            throw new IllegalArgumentException("fault proxy: " + target + " is not a loopback address");
        }
        try {
            return new DatagramFaultProxy(target, 0);
        } catch (IOException e) {
            throw new UncheckedIOException("fault proxy: cannot bind a loopback UDP port", e);
        }
    }

    /** A relay on loopback UDP port {@code listenPort} ({@code 0}: a free one) in front of {@code target}. */
    static DatagramFaultProxy listeningOn(int listenPort, InetSocketAddress target) throws IOException {
        Objects.requireNonNull(target, "target");
        if (target.getAddress() == null || !target.getAddress().isLoopbackAddress()) {
            throw new IllegalArgumentException("fault proxy: " + target + " is not a loopback address");
        }
        return new DatagramFaultProxy(target, listenPort);
    }

    /** A relay in front of UDP {@code port} on the loopback address. */
    public static DatagramFaultProxy to(int port) {
        return to(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    }

    /** The port clients send to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** Relay everything at once from now on (heals {@link #blackhole}, {@link #delay} and {@link #dropFromClients}). */
    public void pass() {
        blackholed = false;
        dropFromClients = datagram -> false;
        delayNanos = 0;
    }

    /** Drop every datagram, either way, from now on. */
    public void blackhole() {
        blackholed = true;
    }

    /** Relay every datagram {@code delay} after it arrived, from now on. */
    public void delay(Duration delay) {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay " + delay + " is negative");
        }
        delayNanos = delay.toNanos();
    }

    /**
     * From now on drop every datagram from a client that {@code matching} accepts (it gets a copy
     * of the datagram's bytes); the others are relayed as before. A server that answers some
     * questions and ignores others: {@code proxy.dropFromClients(q -> isFollowUp(q))}.
     * {@code d -> false} relays everything again.
     */
    public void dropFromClients(Predicate<byte[]> matching) {
        dropFromClients = Objects.requireNonNull(matching, "matching");
    }

    /** Datagrams dropped while blackholed or by {@link #dropFromClients}. */
    public long dropped() {
        return dropped.get();
    }

    @Override
    public void close() {
        closed = true;
        listener.close();
        upstreams.values().forEach(DatagramSocket::close);
        later.shutdownNow();
    }

    private static Thread daemon(Runnable body, String name) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        return t;
    }

    private void relayQuestions() {
        byte[] buffer = new byte[65_535];
        while (!closed) {
            DatagramPacket in = new DatagramPacket(buffer, buffer.length);
            try {
                listener.receive(in);
                SocketAddress client = in.getSocketAddress();
                DatagramSocket upstream = upstreams.computeIfAbsent(client, this::upstreamFor);
                byte[] bytes = Arrays.copyOf(in.getData(), in.getLength());
                if (dropFromClients.test(bytes.clone())) {
                    dropped.incrementAndGet();
                    continue;
                }
                send(upstream, new DatagramPacket(bytes, bytes.length, target));
            } catch (IOException | UncheckedIOException e) {
                if (!closed) {
                    log.warn("fault proxy udp {} stopped relaying", port(), e);
                }
                return;
            }
        }
    }

    private DatagramSocket upstreamFor(SocketAddress client) {
        try {
            DatagramSocket upstream = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            daemon(() -> relayAnswers(upstream, client), "rollcall-fault-proxy-udp-" + port() + "-out-"
                    + upstream.getLocalPort()).start();
            return upstream;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void relayAnswers(DatagramSocket upstream, SocketAddress client) {
        byte[] buffer = new byte[65_535];
        while (!closed) {
            DatagramPacket in = new DatagramPacket(buffer, buffer.length);
            try {
                upstream.receive(in);
                send(listener, new DatagramPacket(Arrays.copyOf(in.getData(), in.getLength()), in.getLength(), client));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void send(DatagramSocket via, DatagramPacket packet) {
        if (blackholed) {
            dropped.incrementAndGet();
            return;
        }
        long delay = delayNanos;
        Runnable send = () -> {
            try {
                if (!blackholed) {
                    via.send(packet);
                } else {
                    dropped.incrementAndGet();
                }
            } catch (IOException e) {
                log.trace("fault proxy udp: send", e);
            }
        };
        if (delay == 0) {
            send.run();
            return;
        }
        try {
            later.schedule(send, delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            log.trace("fault proxy udp closed");
        }
    }
}
