package dev.rollcall.benchmarks;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.SnapshotListener;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.server.FleetServer;
import dev.rollcall.testkit.PushDiscovery;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The service JVM of scenario 14 ({@link FleetService}), alone in its process so that its CPU time and
 * heap are the service's: {@code FleetServiceMain <file of worker URLs> <defaults|closed>} runs one
 * resolver on a {@link PushDiscovery} (policy {@code ^1.0.0}; {@code closed}: {@code
 * keepProbeChannels(false)} and {@code fetchSchemas(false)}, as {@link EmbeddedCoordinatorsMain}'s) and a
 * {@link FleetServer} on an ephemeral loopback port (HTTP off, every
 * {@code rollcall.serve.*} key at its default), prints {@code PORT <port>}, then answers on standard
 * input, one line each:
 * <ul>
 *   <li>{@code fleet <from> <size>}: the fleet becomes the {@code size} URLs from index {@code from} of
 *       the file (wrapping around); answers {@code FLEET <number>} once the snapshot shows exactly them,
 *       all compatible;</li>
 *   <li>{@code slide <steps> <size>}: slides that window by one URL {@code steps} times (one worker
 *       leaves, another joins), each step once the last is published; answers {@code PUBLISHED
 *       n:publishedMicros:listenerNanos,...}: every snapshot published meanwhile as an in-process
 *       listener ({@code resolver.addListener}) received it, its publish time (epoch µs, the resolver's
 *       clock) and how long after it the listener had it;</li>
 *   <li>{@code cpu}: {@code CPU <nanos> <nanos>}: of this process so far, and of the service's threads
 *       alone ({@link #serviceThreadsCpu}); {@code heap}: {@code HEAP <bytes>}
 *       used after full collections; {@code watchers}: {@code WATCHERS <n>}, the server's count;
 *       {@code probes}: {@code PROBES <sent> <failed>}, the resolver's probes.</li>
 * </ul>
 * Stops at the end of its input.
 */
public final class FleetServiceMain {

    private static final Duration TIMEOUT = Duration.ofMinutes(3);

    /** What the in-process listener saw: a snapshot's number, publish time (µs) and its own delay (ns). */
    private record Seen(long number, long publishedMicros, long listenerNanos) {
    }

    private FleetServiceMain() {
    }

    public static void main(String[] args) throws Exception {
        List<WorkerEndpoint> pool = Files.readAllLines(Path.of(args[0])).stream().map(WorkerEndpoint::parse).toList();
        boolean keep = !(args.length > 1 && args[1].equals("closed"));
        PushDiscovery discovery = new PushDiscovery("push[fleet-service]");
        ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
        try (WorkerResolver resolver = WorkerResolver.builder().name("fleet-service").discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0.0")).keepProbeChannels(keep).fetchSchemas(keep)
                .maxCandidates(pool.size()).build();
             SnapshotListener.Registration listener = resolver.addListener(s -> seen.add(seen(s)));
             FleetServer server = FleetServer.builder(resolver)
                     .config(RollcallConfig.of(Map.of())).host("127.0.0.1").port(0).http(false).start()) {
            System.out.println("PORT " + server.grpcAddress().getPort());
            System.out.flush();
            int from = 0;
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] w = line.trim().split(" ");
                switch (w[0]) {
                    case "fleet" -> {
                        from = Integer.parseInt(w[1]);
                        answer("FLEET " + fleet(resolver, discovery, pool, from, Integer.parseInt(w[2])));
                    }
                    case "slide" -> {
                        int steps = Integer.parseInt(w[1]);
                        int size = Integer.parseInt(w[2]);
                        long start = resolver.pin().number();
                        long end = start;
                        for (int i = 0; i < steps; i++) {
                            end = fleet(resolver, discovery, pool, ++from, size);
                        }
                        long last = end;
                        // The listener runs on its own thread: the last publish reaches it a hop later.
                        org.awaitility.Awaitility.await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(5))
                                .until(() -> seen.stream().anyMatch(s -> s.number() >= last));
                        StringJoiner out = new StringJoiner(",");
                        for (Seen s : seen) {
                            if (s.number() > start) {
                                out.add(s.number() + ":" + s.publishedMicros() + ":" + s.listenerNanos());
                            }
                        }
                        answer("PUBLISHED " + out);
                    }
                    case "cpu" -> answer("CPU " + Convergence.processCpu() + " " + serviceThreadsCpu());
                    case "heap" -> answer("HEAP " + Footprint.usedHeapAfterGc());
                    case "watchers" -> answer("WATCHERS " + server.watchers());
                    case "probes" -> answer("PROBES " + resolver.probesSent() + " " + resolver.probesFailed());
                    default -> throw new IllegalArgumentException("unknown command " + line);
                }
                seen.removeIf(s -> s.number() < resolver.pin().number());
            }
        }
        System.exit(0);
    }

    /**
     * CPU time so far of the service's own threads: the server's event loops and call executor
     * ({@code rollcall-serve-*}) and the resolver's listener threads ({@code rollcall-listeners-*}: the
     * service encodes each snapshot on its listener's; this class's own listener only notes a time).
     */
    private static long serviceThreadsCpu() {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (java.lang.management.ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null && (info.getThreadName().startsWith("rollcall-serve-")
                    || info.getThreadName().startsWith("rollcall-listeners-"))) {
                sum += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
            }
        }
        return sum;
    }

    private static Seen seen(FleetSnapshot s) {
        long now = micros(Instant.now());
        return new Seen(s.number(), micros(s.publishedAt()), (now - micros(s.publishedAt())) * 1_000);
    }

    static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000 + t.getNano() / 1_000;
    }

    /** Pushes the window and waits until a snapshot shows exactly it, all compatible; its number. */
    private static long fleet(WorkerResolver resolver, PushDiscovery discovery, List<WorkerEndpoint> pool, int from,
                              int size) throws Exception {
        List<WorkerEndpoint> window = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            window.add(pool.get(Math.floorMod(from + i, pool.size())));
        }
        Set<String> urls = new HashSet<>();
        window.forEach(e -> urls.add(e.url()));
        discovery.push(window);
        return resolver.await(s -> s.counts().candidates() == size && s.counts().compatible() == size
                && urls.stream().allMatch(u -> Convergence.compatible(s, u)), TIMEOUT).number();
    }

    private static void answer(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
