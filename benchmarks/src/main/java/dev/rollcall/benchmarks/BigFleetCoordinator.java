package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetCounts;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The coordinator JVM of scenario 9 ({@link BigFleet}), alone in its process so that its heap, file
 * descriptors and threads are the resolver's:
 * {@code BigFleetCoordinator <size> <churn> <port,port,...> <probeConcurrency>}. The fleet is
 * {@code size} URLs, {@code grpc://127.1.x.y:port} for every port and as many addresses as needed
 * ({@link AddressFleetMain#address}); a resolver with {@code keepProbeChannels(false)} on a
 * {@link PushDiscovery} converges on it (every URL with a verdict: compatible or rejected), then
 * the first {@code churn} URLs are replaced by as many on new addresses. It prints one line,
 * {@code RESULT key=value ...}; progress goes to standard error (the log).
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
        List<WorkerEndpoint> fleet = fleet(0, size, ports);
        List<WorkerEndpoint> spares = fleet(size, churn, ports);
        int rejected = (int) fleet.stream().filter(BigFleetCoordinator::rejectedByPolicy).count();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();

        // Loads the classes and opens the event loops once, so that the heap and descriptors measured
        // below are the resolver's per-worker cost, not its first start.
        PushDiscovery warmDiscovery = new PushDiscovery("push[warm-up]");
        try (WorkerResolver warm = resolver("fleet-warm-up", warmDiscovery, concurrency)) {
            List<WorkerEndpoint> few = fleet.subList(0, Math.min(WARM_UP, size));
            warmDiscovery.push(few);
            warm.await(s -> verdicts(s.counts()) == few.size(), TIMEOUT);
        }
        long heapBefore = Footprint.usedHeapAfterGc();
        int fdsBefore = descriptors();
        int threadsBefore = threads.getThreadCount();
        log("fleet of %,d (%,d rejected by the policy) on ports %s; before: %d descriptors, %d threads, %,d bytes heap",
                size, rejected, ports, fdsBefore, threadsBefore, heapBefore);

        PushDiscovery discovery = new PushDiscovery("push[fleet]");
        try (WorkerResolver resolver = resolver("fleet", discovery, concurrency)) {
            Sampler sampler = Sampler.start(threads);
            long start = System.nanoTime();
            discovery.push(fleet);
            FleetSnapshot done = resolver.await(s -> verdicts(s.counts()) == size, TIMEOUT);
            long nanos = System.nanoTime() - start;
            Sampler.Peaks converging = sampler.stop();
            long probes = resolver.probesSent();
            long failed = resolver.probesFailed();
            FleetCounts counts = done.counts();
            log("converged in %.2f s: %s; %,d probes (%,d failed), peak %d descriptors, peak %d threads",
                    nanos / 1e9, counts, probes, failed, converging.fds(), converging.threads());
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
                            + " churnNanos=%d churnProbes=%d churnFdsPeak=%d",
                    nanos, probes, failed, counts.compatible(), counts.rejected(), rejected, counts.unreachable(),
                    heapBefore, heapAfter, fdsBefore, converging.fds(), fdsConverged, threadsBefore,
                    converging.threads(), threadsConverged, churnNanos, churnProbes, churning.fds()));
            System.out.flush();
        }
        System.exit(0);
    }

    private static WorkerResolver resolver(String name, PushDiscovery discovery, int concurrency) {
        return WorkerResolver.builder().name(name).discovery(discovery).policy(SemverRangePolicy.of("^1.0.0"))
                .keepProbeChannels(false).probeConcurrency(concurrency).build();
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

    private static void log(String format, Object... args) {
        System.err.println(String.format(Locale.ROOT, format, args));
    }

    /** Samples this process's descriptors and threads every 5 ms on a thread of its own, keeping the peaks. */
    private static final class Sampler implements Runnable {
        record Peaks(int fds, int threads) {
        }

        private final ThreadMXBean threads;
        private final AtomicInteger peakFds = new AtomicInteger();
        private final Thread thread;
        private volatile boolean running = true;

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
                peakFds.accumulateAndGet(descriptors(), Math::max);
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        Peaks stop() throws InterruptedException {
            running = false;
            thread.join();
            peakFds.accumulateAndGet(descriptors(), Math::max);
            return new Peaks(peakFds.get(), threads.getPeakThreadCount());
        }
    }
}
