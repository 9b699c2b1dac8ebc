package dev.rollcall.local;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for test workers, taken below the kernel's ephemeral range. A port the kernel
 * hands out for {@code bind(0)} is an ephemeral one: once its worker stops, any outgoing
 * connection (a probe, an etcd client) may take it as its local port, and a restart in place on
 * it then fails with "Address already in use". Ports below the range are never given to outgoing
 * connections. A port is handed out once per JVM: a port that a test keeps in discovery with
 * nobody listening on it yet (to start a worker there later) is not given to another worker of
 * the same JVM meanwhile (for the next 6,000 ports). (Another process on the machine, such as a second suite run beside this
 * one, can still take it: the ports are random in a 12,000-port span.) Thread-safe.
 */
final class LoopbackPorts {

    private static final int SPAN = 12_000;
    private static final int UPPER = ephemeralStart();
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private LoopbackPorts() {
    }

    /** A port below the ephemeral range that nothing listens on right now (another may take it before you bind). */
    static int free() {
        if (HANDED_OUT.size() > SPAN / 2) {
            HANDED_OUT.clear(); // a long-lived JVM: start over rather than run out (the oldest are long gone)
        }
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(Math.max(1024, UPPER - SPAN), UPPER);
            if (HANDED_OUT.contains(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket()) {
                s.setReuseAddress(true);
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
                if (HANDED_OUT.add(port)) {
                    return port;
                }
            } catch (IOException inUse) {
                // try another
            }
        }
        throw new IllegalStateException("no free loopback port below " + UPPER + " after 200 tries");
    }

    /** The first ephemeral port (Linux: /proc/sys/net/ipv4/ip_local_port_range), at most 32768. */
    private static int ephemeralStart() {
        try {
            // readLine, not readString: procfs reports a size of 0, and readString returned one byte.
            String range;
            try (var in = Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
                range = in.readLine().trim();
            }
            int start = Integer.parseInt(range.split("\\s+")[0]);
            return start > 1024 + SPAN ? Math.min(32768, start) : 32768;
        } catch (IOException | RuntimeException notLinux) {
            return 32768;
        }
    }
}
