package dev.rollcall.core.internal.settings;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/**
 * The default of {@code rollcall.probe.max-kept-channels}: how many workers may hold a kept probe
 * channel (one connection, one file descriptor, one {@code WatchWorkerInfo} stream and about 16 KiB
 * of heap each) when nobody said. Derived from the process's descriptor limit, so that the defaults
 * never run a coordinator out of descriptors, whatever discovery hands it:
 *
 * <pre>  cap = clamp(limit / 2 − 256, 64, 10,000)</pre>
 *
 * <ul>
 *   <li><b>half the limit</b>: the other half is the application's (its own server, its clients, its
 *       files) and the user's calls to workers past the cap, each over a channel of its own;
 *   <li><b>− 256</b>: what the coordinator needs besides kept channels (the JVM's jars and logs,
 *       discovery, {@code probe.concurrency} one-off probe sockets and as many closing: ≈ 115 + 2 × 64
 *       measured in scenario 9);
 *   <li><b>at least 64</b>: below that the limit is too small to run anything; kept channels are not
 *       what will exhaust it;
 *   <li><b>at most 10,000</b>: by scenario 5's 16 KiB a kept worker, 160 MB of heap, the most a
 *       default should spend (a Kubernetes cluster's nodes; beyond it a kept channel buys little over
 *       instance ids and refreshes).
 * </ul>
 *
 * The limit is {@code UnixOperatingSystemMXBean#getMaxFileDescriptorCount} (on Linux the JVM raises
 * the soft limit to the hard one at start: 1,048,576 in most containers gives 10,000; 1,024 gives 256).
 * Where it is unavailable (Windows, a runtime without {@code jdk.management}) the cap is
 * {@value #WITHOUT_LIMIT}. Stateless and thread-safe.
 */
public final class KeptChannelCap {

    static final int RESERVE = 256;
    static final int FLOOR = 64;
    static final int CEILING = 10_000;
    /** The cap where the descriptor limit cannot be read: about 64 MB of kept channels. */
    static final int WITHOUT_LIMIT = 4_096;

    private KeptChannelCap() {
    }

    /** The cap for a process allowed {@code descriptorLimit} open descriptors (the rule above). */
    public static int forDescriptorLimit(long descriptorLimit) {
        long half = descriptorLimit / 2 - RESERVE;
        return (int) Math.max(FLOOR, Math.min(CEILING, half));
    }

    /** The cap for this process: {@link #forDescriptorLimit} of its limit, or {@value #WITHOUT_LIMIT}. */
    public static int derived() {
        long limit = descriptorLimit();
        return limit > 0 ? forDescriptorLimit(limit) : WITHOUT_LIMIT;
    }

    /** This process's descriptor limit, or -1 where the platform does not say. */
    static long descriptorLimit() {
        try {
            OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
                return unix.getMaxFileDescriptorCount();
            }
        } catch (LinkageError | SecurityException e) {
            // no jdk.management in this runtime: as on a platform without descriptors
        }
        return -1;
    }
}
