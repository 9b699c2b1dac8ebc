package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Candidates that are down for as long as this is open: loopback ports held by a bound socket that
 * never listens, so that a connection to one is refused at once and nothing else can take the port
 * meanwhile (another worker, a process beside the run, an outgoing connection's local port).
 * Taken below {@link #BELOW}, where the benchmark fleets never listen.
 *
 * <p>The earlier way, a port nothing listened on at the moment it was picked, left the port free to
 * anyone after that; a port taken between the pick and the scenario's end turns a "down" candidate
 * into a live one (or into a second listing of a live one), and the scenario waits for a count
 * that never comes.
 */
final class DownEndpoints implements AutoCloseable {

    /** The benchmark fleets listen from port 10,000 upward. */
    static final int BELOW = 10_000;
    private static final int FROM = 2_000;

    private final List<Socket> held = new ArrayList<>();
    private final List<WorkerEndpoint> endpoints = new ArrayList<>();

    private DownEndpoints() {
    }

    static DownEndpoints reserve(int count) {
        DownEndpoints d = new DownEndpoints();
        InetAddress loopback = InetAddress.getLoopbackAddress();
        int attempts = 0;
        while (d.held.size() < count) {
            if (++attempts > 100 * count) {
                d.close();
                throw new IllegalStateException("could not hold " + count + " unused loopback ports in " + FROM + ".."
                        + BELOW + " (" + d.held.size() + " held)");
            }
            int port = ThreadLocalRandom.current().nextInt(FROM, BELOW);
            Socket s = new Socket();
            try {
                s.setReuseAddress(false);
                s.bind(new InetSocketAddress(loopback, port)); // bound, never listening or connected: refused
                d.held.add(s);
                d.endpoints.add(WorkerEndpoint.of("127.0.0.1", port));
            } catch (IOException taken) {
                closeQuietly(s);
            }
        }
        return d;
    }

    List<WorkerEndpoint> endpoints() {
        return List.copyOf(endpoints);
    }

    @Override
    public void close() {
        held.forEach(DownEndpoints::closeQuietly);
        held.clear();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }
}
