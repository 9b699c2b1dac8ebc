package dev.rollcall.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Issue 35's hostile client, black-box: it opens many {@code WatchWorkerInfo} streams over ten
 * connections to a worker's port, as fast as the worker's announced stream limit lets it. The
 * worker must keep answering a fresh coordinator within its deadline all along, hold only what its
 * limits allow, and drain at once. The suite opens 2,000 streams (enough to pass every limit ten
 * times over); the measurement of the issue opens 100,000:
 * {@code ./mvnw -o -pl core -am verify -Dtest=WatchFloodTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Drollcall.test.flood-streams=100000}. It prints what it measured.
 */
class WatchFloodTest {

    private static final int STREAMS = Integer.getInteger("rollcall.test.flood-streams", 2_000);
    private static final int CONNECTIONS = 10;
    /** What the client keeps in flight: the streams the worker lets each connection open at once. */
    private static final int IN_FLIGHT = CONNECTIONS * WorkerKeys.MAX_CALLS_PER_CONNECTION.defaultValue();
    private static final Duration PROBE_DEADLINE = Duration.ofSeconds(2);

    @Test
    void aClientFloodingTheWorkerWithWatchStreamsStopsNeitherItsAnswersNorItsDrain() throws Exception {
        List<ManagedChannel> flood = new ArrayList<>();
        int allowed = CONNECTIONS * WorkerInfoService.DEFAULT_MAX_WATCHES_PER_CONNECTION;
        try (RollcallWorker worker = RollcallWorker.builder().version("1.0.0").start()) {
            for (int i = 0; i < CONNECTIONS; i++) {
                flood.add(NettyChannelBuilder.forAddress("127.0.0.1", worker.port()).usePlaintext().build());
            }
            // Warm every path first, the client's ten connections up: the measurement is of the
            // flood, not of a cold JVM loading and compiling its classes.
            TestProbe.info(worker.endpoint(), Duration.ofSeconds(10)).get(20, TimeUnit.SECONDS);
            worker.drain();
            worker.resume();
            Flood warm = new Flood();
            for (int i = 0; i < 2 * allowed; i++) {
                warm.open(flood.get(i % CONNECTIONS));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> warm.accepted.get() + warm.refused.get() == 2 * allowed);
            warm.cancelAll();
            await().atMost(Duration.ofSeconds(30)).until(() -> worker.coordinatorsWatching() == 0);

            long heapBefore = usedHeapAfterGc();
            Flood f = new Flood();
            Map<String, Long> cpuBefore = cpuByThreadKind();
            Thread probes = new Thread(() -> f.probeWhileFlooding(worker), "fresh-coordinator");
            long start = System.nanoTime();
            probes.start();
            for (int i = 0; i < STREAMS; i++) {
                f.open(flood.get(i % CONNECTIONS));
            }
            await().atMost(Duration.ofMinutes(5)).until(() -> f.accepted.get() + f.refused.get() + f.failed.get() == STREAMS);
            long flooded = System.nanoTime() - start;
            Map<String, Long> cpuAfter = cpuByThreadKind();
            f.done = true;
            probes.join(TimeUnit.SECONDS.toMillis(30));
            long heapHeld = usedHeapAfterGc();

            int watching = worker.coordinatorsWatching();
            // A fresh coordinator's watch is taken and hears the drain, as every held stream does.
            ManagedChannel fresh = NettyChannelBuilder.forAddress("127.0.0.1", worker.port()).usePlaintext().build();
            flood.add(fresh);
            AtomicReference<WorkerInfoResponse> freshLast = new AtomicReference<>();
            WorkerServiceGrpc.newStub(fresh).watchWorkerInfo(WorkerInfoRequest.getDefaultInstance(),
                    observer(freshLast::set, t -> { }));
            await().atMost(PROBE_DEADLINE).until(() -> freshLast.get() != null);

            long drainStart = System.nanoTime();
            worker.drain();
            long drainNanos = System.nanoTime() - drainStart;
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(1)).until(() -> f.drainedHeard.get() == allowed
                    && freshLast.get().getState() == ServingState.DRAINING);
            long heardNanos = System.nanoTime() - drainStart;

            System.out.printf(Locale.ROOT, "watch flood: %,d streams over %d connections in %d ms: %d held, %,d refused;"
                            + " used heap after GC %.1f MB before, %.1f MB with the streams held (%+.1f MB);"
                            + " %d probes of a fresh coordinator during the flood, slowest %d ms (deadline %d ms);"
                            + " drain() took %.3f ms on the caller's thread, every watcher had heard it after %.1f ms%n",
                    STREAMS, CONNECTIONS, TimeUnit.NANOSECONDS.toMillis(flooded), f.accepted.get(), f.refused.get(),
                    heapBefore / 1e6, heapHeld / 1e6, (heapHeld - heapBefore) / 1e6, f.probeMillis.size(),
                    f.probeMillis.stream().mapToLong(Long::longValue).max().orElse(0), PROBE_DEADLINE.toMillis(),
                    drainNanos / 1e6, heardNanos / 1e6);
            Map<String, Long> cpu = new TreeMap<>();
            cpuAfter.forEach((k, v) -> cpu.put(k, (v - cpuBefore.getOrDefault(k, 0L)) / 1_000_000));
            System.out.printf(Locale.ROOT, "watch flood: CPU ms by thread kind during the flood: %s; threads now %s%n", cpu,
                    threadsByKind());
            System.out.printf(Locale.ROOT, "watch flood: probes %s ms, failures %s%n", f.probeMillis, f.probeFailures);
            assertThat(f.failed.get()).as("streams that failed otherwise: %s", f.otherFailure.get()).isZero();
            assertThat(f.accepted.get()).as("streams held: the limit per connection, ten times").isEqualTo(allowed);
            assertThat(f.refusals.keySet()).containsExactly(
                    "this connection already holds as many WatchWorkerInfo streams as one connection may"
                            + " (rollcall.worker.max-watches-per-connection=16)");
            assertThat(watching).as("watchers the worker counts").isEqualTo(allowed);
            assertThat(f.probeMillis).as("fresh coordinators' probes during the flood").isNotEmpty();
            assertThat(f.probeFailures).as("probes of a fresh coordinator that failed; answered in %s ms", f.probeMillis).isEmpty();

            assertThat(heapHeld - heapBefore).as("heap held for the flood's streams").isLessThan(64L << 20);
        } finally {
            for (ManagedChannel c : flood) {
                c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    /** The hostile client's bookkeeping, and the fresh coordinator that probes meanwhile. */
    private static final class Flood {
        final Semaphore inFlight = new Semaphore(IN_FLIGHT);
        final AtomicInteger accepted = new AtomicInteger();
        final AtomicInteger refused = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final AtomicInteger drainedHeard = new AtomicInteger();
        final AtomicReference<Throwable> otherFailure = new AtomicReference<>();
        final Map<String, Boolean> refusals = new ConcurrentHashMap<>();
        final List<Long> probeMillis = new CopyOnWriteArrayList<>();
        final List<String> probeFailures = new CopyOnWriteArrayList<>();
        volatile boolean done;

        /** The streams that were taken, to cancel. */
        final List<ClientCall<WorkerInfoRequest, WorkerInfoResponse>> held = new CopyOnWriteArrayList<>();

        void cancelAll() {
            held.forEach(c -> c.cancel("warmed up", null));
        }

        void open(ManagedChannel channel) throws InterruptedException {
            inFlight.acquire();
            boolean[] first = {true};
            ClientCall<WorkerInfoRequest, WorkerInfoResponse> call =
                    channel.newCall(WorkerServiceGrpc.getWatchWorkerInfoMethod(), CallOptions.DEFAULT);
            ClientCalls.asyncServerStreamingCall(call, WorkerInfoRequest.getDefaultInstance(), observer(r -> {
                if (first[0]) {
                    first[0] = false;
                    held.add(call);
                    accepted.incrementAndGet();
                    inFlight.release();
                } else if (r.getState() == ServingState.DRAINING) {
                    drainedHeard.incrementAndGet();
                }
            }, t -> {
                Status s = Status.fromThrowable(t);
                if (s.getCode() == Status.Code.CANCELLED) {
                    return; // cancelled here
                }
                if (s.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
                    refusals.put(s.getDescription(), true);
                    refused.incrementAndGet();
                } else {
                    otherFailure.set(t);
                    failed.incrementAndGet();
                }
                inFlight.release();
            }));
        }

        void probeWhileFlooding(RollcallWorker worker) {
            do {
                long t0 = System.nanoTime();
                try {
                    TestProbe.info(worker.endpoint(), PROBE_DEADLINE).get(10, TimeUnit.SECONDS);
                    probeMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                } catch (Exception e) {
                    probeFailures.add(e.toString());
                }
            } while (!done);
        }
    }

    private static StreamObserver<WorkerInfoResponse> observer(Consumer<WorkerInfoResponse> onNext,
                                                               Consumer<Throwable> onError) {
        return new StreamObserver<>() {
            @Override
            public void onNext(WorkerInfoResponse value) {
                onNext.accept(value);
            }

            @Override
            public void onError(Throwable t) {
                onError.accept(t);
            }

            @Override
            public void onCompleted() {
            }
        };
    }

    private static Map<String, Integer> threadsByKind() {
        Map<String, Integer> byKind = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            byKind.merge(t.getName().replaceAll("[0-9]+", "N"), 1, Integer::sum);
        }
        return byKind;
    }

    /** CPU nanoseconds of the live threads, by name without its numbers. */
    private static Map<String, Long> cpuByThreadKind() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<String, Long> byKind = new HashMap<>();
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null) {
                long cpu = threads.getThreadCpuTime(t.getThreadId());
                byKind.merge(t.getThreadName().replaceAll("[0-9]+", "N"), Math.max(0, cpu), Long::sum);
            }
        }
        return byKind;
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
