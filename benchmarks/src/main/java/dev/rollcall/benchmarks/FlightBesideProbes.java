package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Scenario 10, second part: does heavy Flight traffic on the shared channels delay the probes of
 * the other workers? 100 workers (WorkerService and Flight, in a server JVM of their own), a
 * resolver with its defaults; 4 of the workers stream 256 MiB each (1 MiB record batches) to this
 * JVM at once while {@code WorkerInfo} goes to the 96 others, one call a millisecond in turn, as
 * the resolver sends its probes: over each worker's kept probe channel ({@code resolver.channel(e)}),
 * with the probe deadline, answered on the probe event loop. Rollcall: the Flight clients on
 * {@code resolver.channel(e)}, the probes' own connections and event loop; baseline: a Flight
 * client of its own per streaming worker ({@code FlightClient.builder(allocator, location)}: its
 * own connection, grpc's default event loop and executor), beside the probe channels.
 */
final class FlightBesideProbes {

    private static final int WORKERS = 100;
    private static final int STREAMERS = 4;
    private static final int MIB = 256;
    private static final long PROBE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration WAIT = Duration.ofSeconds(120);

    private FlightBesideProbes() {
    }

    /**
     * Where the Flight clients' calls go. {@code SHARED_ON_THE_LOOP}: on {@code resolver.channel(e)},
     * their callbacks and message parsing on the probe event loop (direct executor), as the shared
     * channel ran user calls before it took an executor of its own for them.
     */
    enum Way {
        SHARED("on resolver.channel(e)"), SEPARATE("a client of its own"),
        SHARED_ON_THE_LOOP("on resolver.channel(e), callbacks on the probe event loop");

        final String text;

        Way(String text) {
            this.text = text;
        }
    }

    /** One measurement: probe latencies before the streams (idle) and while they ran; the streams' time. */
    record Result(long[] idle, long[] during, int timedOut, long streamNanos, long bytes) {
    }

    static void run(Plan plan, Report report, Path logs) throws Exception {
        int rounds = plan == Plan.QUICK ? 1 : 3;
        try (ServerFleets fleet = ServerFleets.start(WORKERS, Convergence.VERSION, logs, true);
             BufferAllocator allocator = new RootAllocator()) {
            List<WorkerEndpoint> all = fleet.endpoints();
            for (Way way : Way.values()) {
                measure(way, all, allocator, 32); // warm-up: classes, JIT, the server JVM's buffers
            }
            Map<Way, List<Result>> results = new EnumMap<>(Way.class);
            List<Way> order = new ArrayList<>(List.of(Way.values()));
            for (int r = 0; r < rounds; r++) {
                for (Way way : order) {
                    Result res = measure(way, all, allocator, MIB);
                    results.computeIfAbsent(way, w -> new ArrayList<>()).add(res);
                    System.out.printf(Locale.ROOT, "    %s: probes idle p99 %.1f ms, while streaming p50 %.1f ms / p99 %.1f ms"
                                    + " (%d probes, %d timed out); %d MiB in %.2f s%n", way, millis(p(res.idle(), 99)),
                            millis(p(res.during(), 50)), millis(p(res.during(), 99)), res.during().length,
                            res.timedOut(), res.bytes() >> 20, res.streamNanos() / 1e9);
                }
                Collections.rotate(order, 1); // each way goes first in turn
            }
            Result s = merged(results.get(Way.SHARED));
            Result b = merged(results.get(Way.SEPARATE));
            Result before = merged(results.get(Way.SHARED_ON_THE_LOOP));
            long s99 = p(s.during(), 99);
            long b99 = p(b.during(), 99);
            report.add(new Report.Row("10. probe p50 / p99 of 96 workers while 4 others stream Flight (256 MiB each,"
                    + " 1 MiB batches): Flight on `resolver.channel(e)` / a client per worker",
                    Report.duration(p(s.during(), 50)) + " / " + Report.duration(s99),
                    Report.duration(p(b.during(), 50)) + " / " + Report.duration(b99),
                    Report.lessIsBetter(s99, b99), "—", "—"));
            report.note(String.format(Locale.ROOT, "Flight beside probes (10): a server JVM with 100 workers"
                            + " (WorkerService and Flight); in this JVM a resolver with its defaults converged on them,"
                            + " then 4 workers stream 256 MiB each at once (DoGet, 1 MiB record batches, the server"
                            + " sending as fast as the client reads) while WorkerInfo goes to the 96 others, one call a"
                            + " millisecond in turn, over each one's kept probe channel (resolver.channel(e)) with the"
                            + " probe deadline (%d s) and answered on the probe event loop, as the resolver sends its"
                            + " probes. Shared: the Flight clients on resolver.channel(e); separate: a FlightClient of"
                            + " its own per streaming worker. Probe p99 before the streams: %s / %s; probes past their"
                            + " deadline while streaming: %d / %d of %d / %d; the streams took %.2f s / %.2f s"
                            + " (%.0f / %.0f MiB/s in all). As the shared channel ran user calls before this round (their"
                            + " callbacks and message parsing on the probe event loop): probe p50 / p99 %s / %s, %d past"
                            + " their deadline, streams %.2f s. %d round(s) of the three ways, each going first in turn.",
                    PROBE_TIMEOUT.toSeconds(), Report.duration(p(s.idle(), 99)), Report.duration(p(b.idle(), 99)),
                    s.timedOut(), b.timedOut(), s.during().length, b.during().length, s.streamNanos() / 1e9 / rounds,
                    b.streamNanos() / 1e9 / rounds, mibPerSecond(s), mibPerSecond(b),
                    Report.duration(p(before.during(), 50)), Report.duration(p(before.during(), 99)), before.timedOut(),
                    before.streamNanos() / 1e9 / rounds, rounds));
        }
    }

    private static Result measure(Way way, List<WorkerEndpoint> all, BufferAllocator allocator, int mib)
            throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        try (WorkerResolver resolver = WorkerResolver.builder().name("bench-flight-" + way.name().toLowerCase(Locale.ROOT))
                .discovery(discovery).policy(SemverRangePolicy.of("^1.0.0")).fetchSchemas(false).build()) {
            discovery.push(all);
            resolver.await(s -> s.counts().compatible() == all.size(), WAIT);
            List<WorkerEndpoint> streaming = all.subList(0, STREAMERS);
            List<ManagedChannel> probed = all.subList(STREAMERS, all.size()).stream().map(resolver::channel).toList();

            Latencies idle = new Latencies();
            AtomicInteger timedOut = new AtomicInteger();
            CompletableFuture<Void> quiet = new CompletableFuture<>();
            CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS).execute(() -> quiet.complete(null));
            probe(probed, idle, timedOut, quiet);
            timedOut.set(0);

            AtomicLong bytes = new AtomicLong();
            List<CompletableFuture<Void>> streams = new ArrayList<>();
            ExecutorService readers = Executors.newFixedThreadPool(STREAMERS);
            try {
                long start = System.nanoTime();
                for (WorkerEndpoint e : streaming) {
                    streams.add(CompletableFuture.runAsync(() -> bytes.addAndGet(read(way, resolver, e, allocator, mib)),
                            readers));
                }
                CompletableFuture<Void> done = CompletableFuture.allOf(streams.toArray(CompletableFuture[]::new));
                Latencies during = new Latencies();
                probe(probed, during, timedOut, done);
                long streamNanos = System.nanoTime() - start;
                done.join();
                return new Result(idle.values(), during.values(), timedOut.get(), streamNanos, bytes.get());
            } finally {
                readers.shutdownNow();
            }
        }
    }

    /** One DoGet of {@code mib} MiB; the bytes of the ints read. */
    private static long read(Way way, WorkerResolver resolver, WorkerEndpoint e, BufferAllocator allocator, int mib) {
        try (FlightClient client = switch (way) {
            case SHARED -> FlightGrpcUtils.createFlightClientWithSharedChannel(allocator, resolver.channel(e));
            case SHARED_ON_THE_LOOP -> FlightGrpcUtils.createFlightClientWithSharedChannel(allocator,
                    new OnTheLoop(resolver.channel(e)));
            case SEPARATE -> FlightClient.builder(allocator, Location.forGrpcInsecure(e.host(), e.port())).build();
        };
             FlightStream stream = client.getStream(TenRows.mebibytes(mib))) {
            long rows = 0;
            while (stream.next()) {
                rows += stream.getRoot().getRowCount();
            }
            if (rows != (long) mib * TenRows.BATCH_ROWS) {
                throw new IllegalStateException(e.url() + " streamed " + rows + " rows of " + (long) mib * TenRows.BATCH_ROWS);
            }
            return rows * Integer.BYTES;
        } catch (Exception failed) {
            throw new IllegalStateException("Flight " + way + " from " + e.url() + " failed", failed);
        }
    }

    /**
     * Sends {@code WorkerInfo} over {@code channels} in turn, one call a millisecond, until
     * {@code until} completes, then waits for the answers. Each call as the resolver's probes go:
     * the probe deadline, answered on the channel's event loop (direct executor).
     */
    private static void probe(List<ManagedChannel> channels, Latencies latencies, AtomicInteger timedOut,
                              CompletableFuture<Void> until) throws Exception {
        List<CompletableFuture<Void>> answers = new ArrayList<>();
        long next = System.nanoTime();
        for (int i = 0; !until.isDone(); i++) {
            ManagedChannel channel = channels.get(i % channels.size());
            CompletableFuture<Void> answered = new CompletableFuture<>();
            answers.add(answered);
            long sent = System.nanoTime();
            ClientCalls.asyncUnaryCall(channel.newCall(WorkerServiceGrpc.getWorkerInfoMethod(), CallOptions.DEFAULT
                            .withDeadlineAfter(PROBE_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS).withExecutor(Runnable::run)),
                    WorkerInfoRequest.getDefaultInstance(), new StreamObserver<WorkerInfoResponse>() {
                        @Override
                        public void onNext(WorkerInfoResponse answer) {
                            latencies.add(System.nanoTime() - sent);
                        }

                        @Override
                        public void onError(Throwable t) {
                            timedOut.incrementAndGet();
                            answered.complete(null);
                        }

                        @Override
                        public void onCompleted() {
                            answered.complete(null);
                        }
                    });
            next += PROBE_EVERY_NANOS;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
        }
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
                .get(PROBE_TIMEOUT.toMillis() * 2, TimeUnit.MILLISECONDS);
    }

    /** A shared channel whose calls run on the channel's own executor, the probe event loop. */
    private static final class OnTheLoop extends ManagedChannel {
        private final ManagedChannel shared;

        OnTheLoop(ManagedChannel shared) {
            this.shared = shared;
        }

        @Override
        public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
            return shared.newCall(method, options.getExecutor() != null ? options : options.withExecutor(Runnable::run));
        }

        @Override
        public String authority() {
            return shared.authority();
        }

        @Override
        public ManagedChannel shutdown() {
            return this; // the resolver's
        }

        @Override
        public ManagedChannel shutdownNow() {
            return this;
        }

        @Override
        public boolean isShutdown() {
            return shared.isShutdown();
        }

        @Override
        public boolean isTerminated() {
            return shared.isTerminated();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            return shared.awaitTermination(timeout, unit);
        }
    }

    private static Result merged(List<Result> results) {
        List<long[]> idle = results.stream().map(Result::idle).toList();
        List<long[]> during = results.stream().map(Result::during).toList();
        return new Result(concat(idle), concat(during), results.stream().mapToInt(Result::timedOut).sum(),
                results.stream().mapToLong(Result::streamNanos).sum(), results.stream().mapToLong(Result::bytes).sum());
    }

    private static long[] concat(List<long[]> parts) {
        return parts.stream().flatMapToLong(Arrays::stream).toArray();
    }

    private static long p(long[] values, double p) {
        return Latencies.percentile(values, p);
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }

    private static double mibPerSecond(Result r) {
        return r.streamNanos() == 0 ? 0 : (r.bytes() / 1048576.0) / (r.streamNanos() / 1e9);
    }
}
