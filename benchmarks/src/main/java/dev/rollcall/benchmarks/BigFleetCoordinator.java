package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetCounts;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The coordinator JVM of scenario 9 ({@link BigFleet}), alone in its process so that its heap, file
 * descriptors and threads are the resolver's:
 * {@code BigFleetCoordinator <size> <churn> <port,port,...> <probeConcurrency> [closed|defaults]}. The
 * fleet is {@code size} URLs, {@code grpc://127.1.x.y:port} for every port and as many addresses as
 * needed ({@link AddressFleetMain#address}); a resolver on a {@link PushDiscovery}, with
 * {@code keepProbeChannels(false)} ({@code closed}, the default) or with the defaults ({@code defaults}:
 * kept channels, as many as {@code rollcall.probe.max-kept-channels} derives from this JVM's
 * descriptor limit, the rest tracked without), converges on it (every URL with a verdict: compatible or rejected), then
 * the first {@code churn} URLs are replaced by as many on new addresses. It prints
 * {@code PHASE converging} and {@code PHASE converged} around the convergence (so that the harness
 * can read the servers' CPU time), then one line {@code RESULT key=value ...}; progress goes to
 * standard error (the log).
 */
public final class BigFleetCoordinator {

    static final Duration TIMEOUT = Duration.ofMinutes(10);
    private static final int WARM_UP = 1_000;

    private BigFleetCoordinator() {
    }

    public static void main(String[] args) throws Exception {
        int size = Integer.parseInt(args[0]);
        int churn = Integer.parseInt(args[1]);
        List<Integer> ports = Arrays.stream(args[2].split(",")).map(Integer::parseInt).toList();
        int concurrency = Integer.parseInt(args[3]);
        boolean defaults = args.length > 4 && args[4].equals("defaults");
        long descriptorLimit = ((com.sun.management.UnixOperatingSystemMXBean)
                ManagementFactory.getOperatingSystemMXBean()).getMaxFileDescriptorCount();
        int cap = documentedCap(descriptorLimit);
        List<WorkerEndpoint> fleet = fleet(0, size, ports);
        List<WorkerEndpoint> spares = fleet(size, churn, ports);
        int rejected = (int) fleet.stream().filter(BigFleetCoordinator::rejectedByPolicy).count();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();

        // Loads the classes and opens the event loops once, so that the heap and descriptors measured
        // below are the resolver's per-worker cost, not its first start.
        PushDiscovery warmDiscovery = new PushDiscovery("push[warm-up]");
        long warmProbes;
        try (WorkerResolver warm = resolver("fleet-warm-up", warmDiscovery, concurrency, defaults)) {
            List<WorkerEndpoint> few = fleet.subList(0, Math.min(WARM_UP, size));
            warmDiscovery.push(few);
            warm.await(s -> verdicts(s.counts()) == few.size(), TIMEOUT);
            warmProbes = warm.probesSent();
        }
        long heapBefore = Footprint.usedHeapAfterGc();
        int fdsBefore = descriptors();
        int threadsBefore = threads.getThreadCount();
        String kindsBefore = kinds();
        log("fleet of %,d (%,d rejected by the policy) on ports %s; before: %d descriptors, %d threads, %,d bytes heap",
                size, rejected, ports, fdsBefore, threadsBefore, heapBefore);

        PushDiscovery discovery = new PushDiscovery("push[fleet]");
        if (defaults) {
            log("defaults: kept channels on, rollcall.probe.max-kept-channels derived from the descriptor limit %d: %,d",
                    descriptorLimit, cap);
        }
        try (WorkerResolver resolver = resolver("fleet", discovery, concurrency, defaults)) {
            Sampler sampler = Sampler.start(threads);
            System.out.println("PHASE converging");
            System.out.flush();
            long cpuStart = Convergence.processCpu();
            long start = System.nanoTime();
            discovery.push(fleet);
            FleetSnapshot done = resolver.await(s -> verdicts(s.counts()) == size, TIMEOUT);
            long nanos = System.nanoTime() - start;
            long cpu = Convergence.processCpu() - cpuStart;
            System.out.println("PHASE converged");
            System.out.flush();
            Sampler.Peaks converging = sampler.stop();
            long probes = resolver.probesSent();
            long failed = resolver.probesFailed();
            FleetCounts counts = done.counts();
            log("converged in %.2f s: %s; %,d probes (%,d failed), %.0f ms CPU, peak %d descriptors (%s), peak %d threads",
                    nanos / 1e9, counts, probes, failed, cpu / 1e6, converging.fds(), converging.kinds(),
                    converging.threads());
            log("before the resolver: %s; converged: %s", kindsBefore, kinds());
            int threadsConverged = threads.getThreadCount();
            long heapAfter = Footprint.usedHeapAfterGc();
            int fdsConverged = descriptors();

            List<WorkerEndpoint> churned = Convergence.churned(fleet, spares);
            List<String> fresh = spares.stream().map(WorkerEndpoint::url).toList();
            sampler = Sampler.start(threads);
            long churnStart = System.nanoTime();
            discovery.push(churned);
            resolver.await(s -> s.counts().candidates() == size && verdicts(s.counts()) == size
                    && fresh.stream().allMatch(url -> s.status(url).map(BigFleetCoordinator::hasVerdict).orElse(false)),
                    TIMEOUT);
            long churnNanos = System.nanoTime() - churnStart;
            Sampler.Peaks churning = sampler.stop();
            long churnProbes = resolver.probesSent() - probes;
            log("churn of %,d converged in %.1f ms with %,d probes, peak %d descriptors", churn, churnNanos / 1e6,
                    churnProbes, churning.fds());

            System.out.println(String.format(Locale.ROOT, "RESULT nanos=%d probes=%d failed=%d compatible=%d"
                            + " rejected=%d expectedRejected=%d unreachable=%d heapBefore=%d heapAfter=%d fdsBefore=%d"
                            + " fdsPeak=%d fdsConverged=%d threadsBefore=%d threadsPeak=%d threadsConverged=%d"
                            + " churnNanos=%d churnProbes=%d churnFdsPeak=%d cpu=%d peakSockets=%d beforeSockets=%d"
                            + " warmProbes=%d cap=%d overKeptCap=%d",
                    nanos, probes, failed, counts.compatible(), counts.rejected(), rejected, counts.unreachable(),
                    heapBefore, heapAfter, fdsBefore, converging.fds(), fdsConverged, threadsBefore,
                    converging.threads(), threadsConverged, churnNanos, churnProbes, churning.fds(), cpu,
                    sockets(converging.kinds()), sockets(kindsBefore), warmProbes, defaults ? cap : 0,
                    counts.overKeptCap()));
            System.out.flush();
        }
        System.exit(0);
    }

    private static WorkerResolver resolver(String name, PushDiscovery discovery, int concurrency, boolean defaults) {
        WorkerResolver.Builder b = WorkerResolver.builder().name(name).discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0.0")).probeConcurrency(concurrency);
        return (defaults ? b : b.keepProbeChannels(false)).build();
    }

    /**
     * {@code rollcall.probe.max-kept-channels}'s default as docs/configuration.md documents it: half the
     * descriptor limit less 256, from 64 to 10,000. Written out here, not read from core, so that the
     * run checks the rule: the snapshot's {@code overKeptCap} must leave exactly this many kept.
     */
    static int documentedCap(long descriptorLimit) {
        return (int) Math.max(64, Math.min(10_000, descriptorLimit / 2 - 256));
    }

    /** {@code count} endpoints from the {@code first}-th: address-major, every port of an address in turn. */
    static List<WorkerEndpoint> fleet(int first, int count, List<Integer> ports) {
        List<WorkerEndpoint> endpoints = new ArrayList<>(count);
        for (int i = first; i < first + count; i++) {
            endpoints.add(WorkerEndpoint.of(AddressFleetMain.address(i / ports.size()), ports.get(i % ports.size())));
        }
        return endpoints;
    }

    private static boolean rejectedByPolicy(WorkerEndpoint e) {
        String[] octets = e.host().split("\\.");
        int a = (Integer.parseInt(octets[0]) << 24) | (Integer.parseInt(octets[1]) << 16)
                | (Integer.parseInt(octets[2]) << 8) | Integer.parseInt(octets[3]);
        return AddressFleetMain.versionAt(a - AddressFleetMain.FIRST_ADDRESS).equals(AddressFleetMain.REJECTED_VERSION);
    }

    /** Candidates with a verdict from an answer: accepted or rejected by the policy. */
    private static int verdicts(FleetCounts c) {
        return c.compatible() + c.rejected();
    }

    private static boolean hasVerdict(WorkerStatus status) {
        return status.state() == WorkerStatus.State.COMPATIBLE || status.state() == WorkerStatus.State.REJECTED;
    }

    /** Open file descriptors of this process. */
    static int descriptors() {
        String[] fds = new File("/proc/self/fd").list();
        return fds == null ? -1 : fds.length;
    }

    private static int sockets(String kinds) {
        for (String kv : kinds.split(",")) {
            if (kv.startsWith("socket=")) {
                return Integer.parseInt(kv.substring("socket=".length()));
            }
        }
        return 0;
    }

    /** What this process's descriptors are, e.g. {@code anon_inode=4,file=107,pipe=2,socket=129}. */
    static String kinds() {
        Map<String, Integer> kinds = new TreeMap<>();
        String[] fds = new File("/proc/self/fd").list();
        for (String fd : fds == null ? new String[0] : fds) {
            String kind;
            try {
                String target = Files.readSymbolicLink(Path.of("/proc/self/fd", fd)).toString();
                int colon = target.indexOf(':');
                kind = target.startsWith("/") ? "file" : colon > 0 ? target.substring(0, colon) : target;
            } catch (IOException closedMeanwhile) {
                continue;
            }
            kinds.merge(kind, 1, Integer::sum);
        }
        StringBuilder b = new StringBuilder();
        kinds.forEach((k, v) -> b.append(b.length() == 0 ? "" : ",").append(k).append('=').append(v));
        return b.toString();
    }

    private static void log(String format, Object... args) {
        System.err.println(String.format(Locale.ROOT, format, args));
    }

    /** Samples this process's descriptors and threads every 5 ms on a thread of its own, keeping the peaks. */
    private static final class Sampler implements Runnable {
        record Peaks(int fds, int threads, String kinds) {
        }

        private final ThreadMXBean threads;
        private final AtomicInteger peakFds = new AtomicInteger();
        private final Thread thread;
        private volatile boolean running = true;
        private volatile String peakKinds = "";
        private long lastKinds; // only the sampler's thread

        private Sampler(ThreadMXBean threads) {
            this.threads = threads;
            this.thread = new Thread(this, "rollcall-bench-descriptor-sampler");
            this.thread.setDaemon(true);
        }

        static Sampler start(ThreadMXBean threads) {
            threads.resetPeakThreadCount();
            Sampler s = new Sampler(threads);
            s.thread.start();
            return s;
        }

        @Override
        public void run() {
            while (running) {
                sample();
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        /**
         * Counts the descriptors; at a new peak, and at most every 100 ms while at the peak, also
         * what they are (sockets, event loop descriptors, files), read a moment after the count: the
         * breakdown with the most sockets is kept.
         */
        private void sample() {
            int now = descriptors();
            long t = System.nanoTime();
            if (now > peakFds.get() || now == peakFds.get() && t - lastKinds > 100_000_000L) {
                peakFds.set(now);
                lastKinds = t;
                String kinds = kinds();
                if (peakKinds.isEmpty() || sockets(kinds) > sockets(peakKinds)) {
                    peakKinds = kinds;
                }
            }
        }

        Peaks stop() throws InterruptedException {
            running = false;
            thread.join();
            sample();
            return new Peaks(peakFds.get(), threads.getPeakThreadCount(), peakKinds);
        }
    }
}
