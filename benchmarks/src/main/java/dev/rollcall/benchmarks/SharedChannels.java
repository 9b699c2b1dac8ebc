package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Scenario 8, third part: file descriptors and heap of a coordinator that calls 1,000 workers over
 * Arrow Flight ({@code DoGet}), with a resolver (defaults: a kept probe connection per worker).
 * Shared: each Flight client on {@code resolver.channel(endpoint)}; separate: a Flight client of its
 * own per worker ({@code FlightClient.builder(allocator, location)}) beside the resolver's probe
 * channels. Each way in a JVM of its own; the workers in another ({@link ServerFleets} with Flight).
 */
final class SharedChannels {

    private static final int WORKERS = Plan.SMALL;

    private SharedChannels() {
    }

    static void run(Report report, Path logs) throws Exception {
        try (ServerFleets fleet = ServerFleets.start(WORKERS, Convergence.VERSION, logs, true)) {
            Path urls = Files.createTempFile(logs, "flight-fleet-", ".txt");
            Files.write(urls, fleet.endpoints().stream().map(WorkerEndpoint::url).toList());
            // Counts, not times: both ways at once, each in its own JVM.
            var sharing = java.util.concurrent.CompletableFuture.supplyAsync(() -> measure("shared", urls, logs),
                    Bench.onThread("shared-channels-shared"));
            Map<String, Long> separate = measure("separate", urls, logs);
            Map<String, Long> shared = sharing.join();
            report.add(new Report.Row("8. coordinator calling 1,000 workers over Flight: open file descriptors"
                    + " (Flight on `resolver.channel(e)` / a client per worker beside the probe channels)",
                    Report.count(shared.get("fds")), Report.count(separate.get("fds")),
                    Report.lessIsBetter(shared.get("fds"), separate.get("fds")), "—", "—"));
            report.add(new Report.Row("8. … its heap after GC, resolver and clients included (the same two ways)",
                    Report.bytes(shared.get("heap")), Report.bytes(separate.get("heap")),
                    Report.lessIsBetter(shared.get("heap"), separate.get("heap")), "—", "—"));
            report.note("Shared channels (8): a coordinator JVM of its own per way (-Xmx1g, G1; both at once):"
                    + " a resolver with its"
                    + " defaults converges on 1,000 workers (WorkerService and Flight, in a server JVM), then one Flight"
                    + " client per worker does one DoGet of ten rows, and all stay open. Counted then: /proc/self/fd"
                    + " (before the resolver: " + shared.get("fdsBefore") + " / " + separate.get("fdsBefore")
                    + ") and the used heap after System.gc() minus the same before the resolver started"
                    + " (Java heap only: Netty's direct buffers and the kernel's socket buffers are not in it).");
        }
    }

    private static Map<String, Long> measure(String way, Path urls, Path logs) {
        try (ChildJvm jvm = ChildJvm.start("shared-channels-" + way, List.of("-Xmx1g", "-XX:+UseG1GC"), Bench.class,
                List.of("--child", "shared-channels", way, urls.toString()),
                logs.resolve("shared-channels-" + way + ".log"))) {
            return Footprint.values(jvm.awaitLine("RESULT "));
        }
    }

    /** In the child JVM: prints {@code RESULT fds=<n> heap=<bytes> fdsBefore=<n>} with every client open. */
    static void childMain(String way, Path urlsFile) throws Exception {
        List<WorkerEndpoint> fleet = Files.readAllLines(urlsFile).stream().map(WorkerEndpoint::parse).toList();
        long fdsBefore = openFiles();
        long heapBefore = Footprint.usedHeapAfterGc();
        List<FlightClient> clients = new ArrayList<>();
        PushDiscovery discovery = new PushDiscovery();
        try (BufferAllocator allocator = new RootAllocator();
             WorkerResolver resolver = WorkerResolver.builder().name("bench-shared-" + way).discovery(discovery)
                     .policy(SemverRangePolicy.of("^1.0.0")).fetchSchemas(false).build()) {
            discovery.push(fleet);
            resolver.awaitWorkers(fleet.size(), Convergence.TIMEOUT);
            for (WorkerEndpoint e : fleet) {
                FlightClient c = way.equals("shared")
                        ? FlightGrpcUtils.createFlightClientWithSharedChannel(allocator, resolver.channel(e))
                        : FlightClient.builder(allocator, Location.forGrpcInsecure(e.host(), e.port())).build();
                clients.add(c);
                try (FlightStream stream = c.getStream(new Ticket(new byte[] {1}))) {
                    while (stream.next()) {
                        stream.getRoot().getRowCount();
                    }
                }
            }
            long fds = openFiles();
            long heap = Footprint.usedHeapAfterGc() - heapBefore;
            System.out.println("RESULT fds=" + fds + " heap=" + heap + " fdsBefore=" + fdsBefore);
            System.out.flush();
            System.err.println(way + ": " + fds + " descriptors (" + fdsBefore + " before), heap +" + heap + " bytes");
            for (FlightClient c : clients) {
                c.close();
            }
        }
    }

    private static long openFiles() {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list /proc/self/fd", e);
        }
    }
}
