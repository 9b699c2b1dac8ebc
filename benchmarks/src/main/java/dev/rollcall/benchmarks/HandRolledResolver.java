package dev.rollcall.benchmarks;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The baseline: the loop users write by hand today, as a competent user writes it. Every period it
 * takes discovery's list, probes every URL that is missing from a hand-kept
 * {@code HashMap<URL, version>} — all of them at once, each on a channel built the usual way
 * ({@code ManagedChannelBuilder.forTarget(...).usePlaintext()}, gRPC's shared event loop and
 * default executor), with the same 2 s deadline Rollcall uses, the channel shut down after the
 * answer — and remembers the answers. {@link #workers()} filters the candidates under a lock and
 * builds a new list on every call.
 *
 * <p>What it does not do, and Rollcall does: bound the probes in flight, evict URLs that left,
 * notice a worker that restarted in place with another version, back off from unreachable workers
 * (it re-probes them every period), publish anything before the period comes round.
 */
final class HandRolledResolver implements AutoCloseable {

    private final Supplier<List<String>> discovery;
    private final String expectedVersion;
    private final Duration deadline;
    private final Map<String, String> versions = new HashMap<>(); // guarded by this
    private List<String> candidates = List.of();                  // guarded by this
    private long passes;                                          // guarded by this
    private final AtomicLong probesSent = new AtomicLong();
    private final Latencies latencies = new Latencies();
    private ScheduledExecutorService loop;
    private volatile Consumer<List<String>> onPass = workers -> { };

    /** @param discovery discovery's latest list of worker URLs ({@code grpc://host:port}) */
    HandRolledResolver(Supplier<List<String>> discovery, String expectedVersion) {
        this.discovery = discovery;
        this.expectedVersion = expectedVersion;
        this.deadline = Duration.ofSeconds(2);
    }

    /** Runs the loop every {@code period}, the first pass at once. */
    synchronized HandRolledResolver start(Duration period) {
        loop = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "baseline-loop");
            t.setDaemon(true);
            return t;
        });
        loop.scheduleWithFixedDelay(() -> {
            try {
                pass();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                e.printStackTrace(); // a user's loop would log it and carry on at the next period
            }
        }, 0, period.toNanos(), TimeUnit.NANOSECONDS);
        return this;
    }

    /** One pass of the loop: take discovery's list, probe what is not in the map, wait for the answers. */
    void pass() throws InterruptedException {
        List<String> urls = discovery.get();
        List<String> unknown = new ArrayList<>();
        synchronized (this) {
            for (String url : urls) {
                if (!versions.containsKey(url)) {
                    unknown.add(url);
                }
            }
        }
        CountDownLatch answered = new CountDownLatch(unknown.size());
        for (String url : unknown) {
            ManagedChannel channel = ManagedChannelBuilder.forTarget(url.substring(url.indexOf("://") + 3))
                    .usePlaintext()
                    .build();
            probesSent.incrementAndGet();
            long start = System.nanoTime();
            ListenableFuture<WorkerInfoResponse> call = WorkerServiceGrpc.newFutureStub(channel)
                    .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                    .workerInfo(WorkerInfoRequest.getDefaultInstance());
            Futures.addCallback(call, new FutureCallback<>() {
                @Override
                public void onSuccess(WorkerInfoResponse info) {
                    latencies.add(System.nanoTime() - start);
                    synchronized (HandRolledResolver.this) {
                        versions.put(url, info.getVersion());
                    }
                    channel.shutdown();
                    answered.countDown();
                }

                @Override
                public void onFailure(Throwable t) {
                    channel.shutdown();
                    answered.countDown();
                }
            }, MoreExecutors.directExecutor());
        }
        answered.await(deadline.toMillis() * 2, TimeUnit.MILLISECONDS);
        synchronized (this) {
            candidates = urls;
            passes++;
            notifyAll();
        }
        onPass.accept(workers());
    }

    /** Tells {@code listener} the compatible workers after each pass, on the pass's thread (for measurements). */
    HandRolledResolver onPass(Consumer<List<String>> listener) {
        this.onPass = listener;
        return this;
    }

    /** The compatible workers: filtered under the lock, a new list on every call. */
    synchronized List<String> workers() {
        List<String> compatible = new ArrayList<>();
        for (String url : candidates) {
            if (expectedVersion.equals(versions.get(url))) {
                compatible.add(url);
            }
        }
        return compatible;
    }

    /** Waits until a pass has ended with {@code count} compatible workers; false on timeout. */
    synchronized boolean awaitWorkers(int count, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (workers().size() != count) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }

    /** Waits until the pass running now (or the next one) has ended; false on timeout. */
    synchronized boolean awaitNextPass(Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        long seen = passes;
        while (passes == seen) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }

    long probesSent() {
        return probesSent.get();
    }

    /** Round trips of the answered probes, from the call to the answer. */
    Latencies latencies() {
        return latencies;
    }

    @Override
    public synchronized void close() {
        if (loop != null) {
            loop.shutdownNow();
        }
    }
}
