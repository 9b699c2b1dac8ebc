package dev.rollcall.benchmarks;

import io.grpc.Channel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fixed number of health checks in flight on one channel, continuously: each call that ends
 * starts the next (a failed one after 1 ms, so that a channel with nowhere to send does not spin a
 * core). Counts the calls that succeeded and failed. Thread-safe; {@link #close()} stops issuing
 * and waits for the calls in flight (cancel them first by shutting the channel down).
 */
final class CallLoad implements AutoCloseable {

    private static final HealthCheckRequest CHECK = HealthCheckRequest.getDefaultInstance();

    private final HealthGrpc.HealthStub stub;
    private final ScheduledExecutorService retry = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rollcall-bench-call-retry");
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong ok = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final java.util.Map<io.grpc.Status.Code, AtomicLong> failures = new java.util.concurrent.ConcurrentHashMap<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile boolean stopped;

    private CallLoad(Channel channel) {
        this.stub = HealthGrpc.newStub(channel);
    }

    /** Starts {@code calls} chains of calls on {@code channel}. */
    static CallLoad start(Channel channel, int calls) {
        CallLoad load = new CallLoad(channel);
        for (int i = 0; i < calls; i++) {
            load.next();
        }
        return load;
    }

    long ok() {
        return ok.get();
    }

    long failed() {
        return failed.get();
    }

    /** The calls that did not succeed, by status code, e.g. {@code 12 UNAVAILABLE, 3 DEADLINE_EXCEEDED}; "none". */
    String failures() {
        return failures.isEmpty() ? "none" : failures.entrySet().stream().sorted(java.util.Map.Entry.comparingByKey())
                .map(e -> e.getValue().get() + " " + e.getKey()).collect(java.util.stream.Collectors.joining(", "));
    }

    private void next() {
        if (stopped) {
            return;
        }
        inFlight.incrementAndGet();
        stub.withDeadlineAfter(5, TimeUnit.SECONDS).check(CHECK, new StreamObserver<>() {
            @Override
            public void onNext(HealthCheckResponse value) {
                // only the outcome counts
            }

            @Override
            public void onError(Throwable t) {
                failed.incrementAndGet();
                failures.computeIfAbsent(io.grpc.Status.fromThrowable(t).getCode(), c -> new AtomicLong())
                        .incrementAndGet();
                inFlight.decrementAndGet();
                try {
                    retry.schedule(CallLoad.this::next, 1, TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.RejectedExecutionException stopping) {
                    // closed meanwhile
                }
            }

            @Override
            public void onCompleted() {
                ok.incrementAndGet();
                inFlight.decrementAndGet();
                next();
            }
        });
    }

    /** Starts no more calls; those in flight go on. */
    void stop() {
        stopped = true;
        retry.shutdownNow();
    }

    /** Stops, then waits (at most 10 s) for the calls in flight to end. */
    @Override
    public void close() {
        stop();
        org.awaitility.Awaitility.await("the calls in flight to end").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(5)).until(() -> inFlight.get() <= 0);
    }
}
