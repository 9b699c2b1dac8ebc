package dev.rollcall.cli;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The demo's "small job": the sum of squares over {@code [0, n)}, split into one partition per
 * compatible worker of one pinned snapshot, each fetched over Arrow Flight, concurrently.
 *
 * <p>It is also the demo's safety check. Planning uses only the snapshot it is given, and every
 * answer must carry the version that snapshot recorded for the worker: anything else would be a job
 * that mixed versions behind the coordinator's back, and fails the job.
 *
 * <p>Not thread-safe: one job at a time. {@link #close()} stops the job threads and closes the
 * client allocator.
 */
final class SquaresJob implements AutoCloseable {

    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

    private final BufferAllocator allocator;
    private final ExecutorService executor;

    /** One worker's share of the range. */
    record Partition(WorkerInfo worker, long from, long to) {
    }

    /** What one worker sent back. */
    record Part(Partition partition, String version, long rows, long sum, Duration took) {
    }

    /** The combined result of one job. */
    record Result(long snapshot, long n, List<Part> parts, long rows, long sum) {

        /** How many parts each version computed. */
        SortedMap<String, Integer> versions() {
            SortedMap<String, Integer> histogram = new TreeMap<>();
            parts.forEach(p -> histogram.merge(p.version(), 1, Integer::sum));
            return histogram;
        }

        boolean correct() {
            return rows == n && sum == expectedSum(n);
        }

        /** E.g. {@code job on snapshot 4: 3 workers, versions {1.4.0=2, 1.5.1=1}, sum of squares 0..999999 = ... (correct)}. */
        String summary() {
            return "job on snapshot " + snapshot + ": " + parts.size() + (parts.size() == 1 ? " worker" : " workers")
                    + ", versions " + versions() + ", sum of squares 0.." + (n - 1) + " = " + sum
                    + (correct() ? " (correct)" : " (WRONG: expected " + expectedSum(n) + " over " + n + " rows, got "
                    + rows + " rows)");
        }
    }

    /** @param allocator for the clients' buffers; closed by {@link #close()} */
    SquaresJob(BufferAllocator allocator, int threads) {
        this.allocator = allocator;
        this.executor = Executors.newFixedThreadPool(threads, daemonThreads("rollcall-demo-job-"));
    }

    /** The closed form of the sum of {@code i * i} over {@code [0, n)}: {@code (n-1) n (2n-1) / 6}. */
    static long expectedSum(long n) {
        if (n == 0) {
            return 0;
        }
        return Math.multiplyExact(Math.multiplyExact(n - 1, n), 2 * n - 1) / 6;
    }

    /** Splits {@code [0, n)} into one contiguous partition per compatible worker of {@code snapshot}. */
    static List<Partition> plan(FleetSnapshot snapshot, long n) {
        List<WorkerInfo> workers = snapshot.workers();
        if (workers.isEmpty()) {
            throw new DemoFailure("snapshot " + snapshot.number() + " has no compatible worker to run the job on ("
                    + snapshot.counts() + ")");
        }
        List<Partition> partitions = new ArrayList<>(workers.size());
        long base = n / workers.size();
        long extra = n % workers.size();
        long from = 0;
        for (int i = 0; i < workers.size(); i++) {
            WorkerInfo w = workers.get(i);
            // workers() is the compatible set by contract; checked anyway because this is what the demo proves.
            WorkerStatus.State state = snapshot.status(w.endpoint().url()).map(WorkerStatus::state).orElse(null);
            if (state != WorkerStatus.State.COMPATIBLE) {
                throw new DemoFailure("snapshot " + snapshot.number() + " offered " + w.endpoint().url()
                        + " as a worker, but its status is " + state);
            }
            long to = from + base + (i < extra ? 1 : 0);
            partitions.add(new Partition(w, from, to));
            from = to;
        }
        return partitions;
    }

    /**
     * Runs the job on {@code snapshot}'s compatible workers and checks every answer's version against
     * the snapshot.
     *
     * @throws DemoFailure when a worker fails, times out or answers with another version
     */
    Result run(FleetSnapshot snapshot, long n) throws InterruptedException {
        List<Partition> partitions = plan(snapshot, n);
        List<CompletableFuture<Part>> futures = new ArrayList<>();
        for (Partition p : partitions) {
            futures.add(CompletableFuture.supplyAsync(() -> fetch(p), executor));
        }
        try {
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new))
                    .get(CALL_TIMEOUT.toMillis() + 5_000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof CompletionException && e.getCause().getCause() != null
                    ? e.getCause().getCause() : e.getCause();
            if (cause instanceof DemoFailure failure) {
                throw failure;
            }
            throw new DemoFailure("the job on snapshot " + snapshot.number() + " failed: " + cause, cause);
        } catch (TimeoutException e) {
            futures.forEach(f -> f.cancel(true));
            throw new DemoFailure("the job on snapshot " + snapshot.number() + " did not finish within "
                    + CALL_TIMEOUT.plusSeconds(5).toSeconds() + " s");
        }
        List<Part> parts = new ArrayList<>();
        long rows = 0;
        long sum = 0;
        for (CompletableFuture<Part> f : futures) {
            Part part = f.join();
            String url = part.partition().worker().endpoint().url();
            String planned = snapshot.version(url).orElse("(none)");
            if (!part.version().equals(planned)) {
                throw new DemoFailure("mixed-version job: snapshot " + snapshot.number() + " planned " + url
                        + " as version " + planned + ", but the data came from version " + part.version());
            }
            parts.add(part);
            rows += part.rows();
            sum = Math.addExact(sum, part.sum());
        }
        return new Result(snapshot.number(), n, List.copyOf(parts), rows, sum);
    }

    /** One Flight call: a client of its own, one ticket, exactly one batch of one row back. */
    @SuppressWarnings("try") // Arrow's close() methods declare InterruptedException; handled below
    private Part fetch(Partition p) {
        long started = System.nanoTime();
        WorkerEndpoint e = p.worker().endpoint();
        try (FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure(e.host(), e.port())).build();
             FlightStream stream = client.getStream(PartitionProducer.ticket(p.from(), p.to()),
                     CallOptions.timeout(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))) {
            if (!stream.next()) {
                throw new DemoFailure(e.url() + " sent no record batch for [" + p.from() + ", " + p.to() + ")");
            }
            VectorSchemaRoot root = stream.getRoot();
            if (root.getRowCount() != 1) {
                throw new DemoFailure(e.url() + " sent " + root.getRowCount() + " rows; expected 1");
            }
            String version = new String(((VarCharVector) root.getVector(PartitionProducer.VERSION)).get(0),
                    StandardCharsets.UTF_8);
            long rows = ((BigIntVector) root.getVector(PartitionProducer.ROWS)).get(0);
            long sum = ((BigIntVector) root.getVector(PartitionProducer.SUM)).get(0);
            if (stream.next()) {
                throw new DemoFailure(e.url() + " sent more than one record batch");
            }
            return new Part(p, version, rows, sum, Duration.ofNanos(System.nanoTime() - started));
        } catch (DemoFailure failure) {
            throw failure;
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new DemoFailure("interrupted while fetching from " + e.url(), ie);
        } catch (Exception ex) {
            throw new DemoFailure("fetching [" + p.from() + ", " + p.to() + ") from " + e.url() + " (version "
                    + p.worker().version() + ") failed: " + ex.getMessage(), ex);
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the demo's job threads did not stop within 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        allocator.close();
    }

    static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
