package dev.rollcall.testkit.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The fault proxies in front of one test's servers, made on demand and faulted together: a backend
 * that talks to several servers, or to one over TCP and UDP, goes silent as a whole with one
 * {@link #blackhole()}. What {@code WorkerDiscoveryContract}'s silent-server test hands a backend's
 * fixture, so that the fixture can point the backend's settings through it:
 *
 * <pre>{@code
 * Map.of("endpoints", "http://" + proxies.tcp(etcd.clientPort()).hostAndPort(), ...)
 * }</pre>
 *
 * <p>Thread-safe. {@link #close()} closes every proxy it made.
 */
public final class FaultProxies implements AutoCloseable {

    private static final int PORT_ATTEMPTS = 20;

    private final List<FaultProxy> tcp = new CopyOnWriteArrayList<>();
    private final List<DatagramFaultProxy> udp = new CopyOnWriteArrayList<>();

    /** A TCP proxy on a free loopback port in front of loopback {@code port}. */
    public FaultProxy tcp(int port) {
        return add(FaultProxy.to(port));
    }

    /** A UDP relay on a free loopback port in front of loopback UDP {@code port}. */
    public DatagramFaultProxy udp(int port) {
        return add(DatagramFaultProxy.to(port));
    }

    /**
     * A TCP proxy and a UDP relay on one free loopback port number, in front of loopback
     * {@code port} over TCP and UDP alike: for a DNS server, which a client asks over UDP and, for
     * an answer too large for a datagram, over TCP at the same address. Returns that port.
     */
    public int tcpAndUdp(int port) {
        InetSocketAddress target = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
        IOException last = null;
        for (int i = 0; i < PORT_ATTEMPTS; i++) {
            DatagramFaultProxy datagrams;
            try {
                datagrams = DatagramFaultProxy.listeningOn(0, target);
            } catch (IOException e) {
                last = e;
                continue;
            }
            try {
                FaultProxy stream = FaultProxy.listeningOn(datagrams.port(), target);
                add(datagrams);
                add(stream);
                return datagrams.port();
            } catch (IOException taken) {   // that number is free for UDP but not for TCP: try another
                last = taken;
                datagrams.close();
            }
        }
        throw new UncheckedIOException("fault proxy: no loopback port free for both TCP and UDP in "
                + PORT_ATTEMPTS + " attempts", last);
    }

    /** Every proxy made so far goes silent: no byte, no datagram moves; TCP sockets stay open. */
    public void blackhole() {
        tcp.forEach(FaultProxy::blackhole);
        udp.forEach(DatagramFaultProxy::blackhole);
    }

    /** Every proxy made so far passes everything again, at once. */
    public void pass() {
        tcp.forEach(FaultProxy::pass);
        udp.forEach(DatagramFaultProxy::pass);
    }

    /** The ports clients reach the proxies on, TCP and UDP, in the order they were made. */
    public List<Integer> ports() {
        List<Integer> ports = new ArrayList<>();
        tcp.forEach(p -> ports.add(p.port()));
        udp.forEach(p -> {
            if (!ports.contains(p.port())) {
                ports.add(p.port());
            }
        });
        return ports;
    }

    /** The TCP proxies made so far. */
    public List<FaultProxy> tcpProxies() {
        return List.copyOf(tcp);
    }

    /** The UDP relays made so far. */
    public List<DatagramFaultProxy> udpProxies() {
        return List.copyOf(udp);
    }

    @Override
    public void close() {
        tcp.forEach(FaultProxy::close);
        udp.forEach(DatagramFaultProxy::close);
    }

    private FaultProxy add(FaultProxy proxy) {
        tcp.add(proxy);
        return proxy;
    }

    private DatagramFaultProxy add(DatagramFaultProxy proxy) {
        udp.add(proxy);
        return proxy;
    }
}
