package dev.rollcall.worker;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * Counts the calls a worker is serving (Arrow Flight and the user's own services; not Rollcall's
 * {@code WorkerService} or gRPC reflection, which coordinators keep open), so that a graceful close
 * can wait until the work in flight is done. Thread-safe.
 */
final class CallsInFlight implements ServerInterceptor {

    private final Object lock = new Object();
    private int inFlight; // guarded by lock
    private long lastStart = Long.MIN_VALUE; // System.nanoTime() of the last call that started; guarded by lock
    private long drainedAt = Long.MIN_VALUE; // System.nanoTime() when coordinators were told to stop; guarded by lock

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                      ServerCallHandler<Q, R> next) {
        String service = call.getMethodDescriptor().getServiceName();
        if (service == null || service.startsWith("rollcall.v1.") || service.startsWith("grpc.reflection.")) {
            return next.startCall(call, headers);
        }
        AtomicBoolean ended = new AtomicBoolean();
        Runnable end = () -> {
            if (ended.compareAndSet(false, true)) {
                synchronized (lock) {
                    inFlight--;
                    lock.notifyAll();
                }
            }
        };
        synchronized (lock) {
            inFlight++;
            lastStart = System.nanoTime();
        }
        ServerCall<Q, R> counted = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                try {
                    super.close(status, trailers);
                } finally {
                    end.run();
                }
            }
        };
        try {
            return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(next.startCall(counted, headers)) {
                @Override
                public void onCancel() {
                    try {
                        super.onCancel();
                    } finally {
                        end.run();
                    }
                }
            };
        } catch (RuntimeException e) {
            end.run();
            throw e;
        }
    }

    /**
     * Notes that coordinators were just told to plan no new work here. The quiet period of
     * {@link #awaitQuiet} counts from this moment too: a coordinator that pinned its snapshot just
     * before the news may still be connecting when no call of it has arrived yet.
     */
    void drained() {
        synchronized (lock) {
            drainedAt = System.nanoTime();
            lock.notifyAll();
        }
    }

    /** Something {@link #awaitQuiet}'s condition reads changed elsewhere: it looks again. */
    void wake() {
        synchronized (lock) {
            lock.notifyAll();
        }
    }

    /** Calls being served now. */
    int count() {
        synchronized (lock) {
            return inFlight;
        }
    }

    /**
     * Waits until no call is in flight and neither a call started nor {@link #drained()} was noted
     * for {@code quietMillis}, or {@code millis} pass; returns whether it got quiet. The quiet period
     * lets queries that planned on the worker before it drained still reach it.
     */
    boolean awaitQuiet(long quietMillis, long millis) throws InterruptedException {
        return awaitQuiet(quietMillis, millis, () -> true);
    }

    /**
     * As {@link #awaitQuiet(long, long)}, and until {@code released} says so too; it is read under
     * this object's lock (so it must not wait for it), again after every {@link #wake()}.
     */
    boolean awaitQuiet(long quietMillis, long millis, BooleanSupplier released) throws InterruptedException {
        long now = System.nanoTime();
        long deadline = now + TimeUnit.MILLISECONDS.toNanos(millis);
        long quiet = TimeUnit.MILLISECONDS.toNanos(quietMillis);
        synchronized (lock) {
            while (true) {
                now = System.nanoTime();
                long last = Math.max(lastStart, drainedAt);
                long sinceStart = last == Long.MIN_VALUE ? Long.MAX_VALUE : now - last;
                boolean quietNow = inFlight == 0 && sinceStart >= quiet;
                if (quietNow && released.getAsBoolean()) {
                    return true;
                }
                long left = deadline - now;
                if (left <= 0) {
                    return false;
                }
                long wait = inFlight > 0 || quietNow ? left : Math.min(left, quiet - sinceStart);
                TimeUnit.NANOSECONDS.timedWait(lock, Math.max(1, wait));
            }
        }
    }
}
