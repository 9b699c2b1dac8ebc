package dev.rollcall.worker;

import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.net.SocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounds the {@code WatchWorkerInfo} streams a worker holds, in all and per connection (a
 * connection is its client's address and port). A stream counts from the moment its call starts,
 * before its request arrives, until it ends however it ends; one over a bound is refused at once
 * with {@code RESOURCE_EXHAUSTED} and a message naming the bound and its key. Refusals are logged
 * at WARN at most once a minute, with how many there were since. A stream it lets through runs
 * with its client's address in {@link #PEER}. Thread-safe.
 */
final class WatchLimit implements ServerInterceptor {

    static final String MAX_WATCHES_KEY = "rollcall.worker.max-watches";
    static final String MAX_WATCHES_PER_CONNECTION_KEY = "rollcall.worker.max-watches-per-connection";
    /** The client address of the watch stream being served (null when the transport does not say). */
    static final Context.Key<SocketAddress> PEER = Context.key("rollcall-watch-peer");
    private static final Logger log = LoggerFactory.getLogger(WatchLimit.class);
    private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** The key of calls whose transport does not say where they come from (tests, in-process). */
    private static final Object UNKNOWN_PEER = new Object();

    private final int maxWatches;
    private final int maxPerConnection;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<Object, Integer> perConnection = new ConcurrentHashMap<>();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong lastLog = new AtomicLong(System.nanoTime() - LOG_EVERY_NANOS);

    WatchLimit(int maxWatches, int maxPerConnection) {
        this.maxWatches = maxWatches;
        this.maxPerConnection = maxPerConnection;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                      ServerCallHandler<Q, R> next) {
        if (!WorkerServiceGrpc.getWatchWorkerInfoMethod().getFullMethodName()
                .equals(call.getMethodDescriptor().getFullMethodName())) {
            return next.startCall(call, headers);
        }
        SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        Object connection = remote != null ? remote : UNKNOWN_PEER;
        String refusal = acquire(connection);
        if (refusal != null) {
            noteRefusal(refusal, remote);
            call.close(Status.RESOURCE_EXHAUSTED.withDescription(refusal), new Metadata());
            return new ServerCall.Listener<>() {
            };
        }
        AtomicBoolean released = new AtomicBoolean();
        Runnable release = () -> {
            if (released.compareAndSet(false, true)) {
                release(connection);
            }
        };
        try {
            ServerCall.Listener<Q> started = Contexts.interceptCall(Context.current().withValue(PEER, remote), call,
                    headers, next);
            return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(started) {
                @Override
                public void onCancel() {
                    try {
                        super.onCancel();
                    } finally {
                        release.run();
                    }
                }

                @Override
                public void onComplete() {
                    try {
                        super.onComplete();
                    } finally {
                        release.run();
                    }
                }
            };
        } catch (RuntimeException e) {
            release.run();
            throw e;
        }
    }

    /** Takes a place for a stream on {@code connection}; null, or why there is none. */
    private String acquire(Object connection) {
        if (total.incrementAndGet() > maxWatches) {
            total.decrementAndGet();
            return "this worker already serves as many WatchWorkerInfo streams as it may (" + MAX_WATCHES_KEY + "="
                    + maxWatches + ")";
        }
        boolean[] taken = {false};
        perConnection.compute(connection, (k, n) -> {
            int have = n == null ? 0 : n;
            if (have >= maxPerConnection) {
                return n;
            }
            taken[0] = true;
            return have + 1;
        });
        if (!taken[0]) {
            total.decrementAndGet();
            return "this connection already holds as many WatchWorkerInfo streams as one connection may ("
                    + MAX_WATCHES_PER_CONNECTION_KEY + "=" + maxPerConnection + ")";
        }
        return null;
    }

    private void release(Object connection) {
        perConnection.computeIfPresent(connection, (k, n) -> n <= 1 ? null : n - 1);
        total.decrementAndGet();
    }

    private void noteRefusal(String refusal, SocketAddress remote) {
        long count = refused.incrementAndGet();
        long last = lastLog.get();
        long now = System.nanoTime();
        if (now - last >= LOG_EVERY_NANOS && lastLog.compareAndSet(last, now)) {
            refused.addAndGet(-count);
            log.warn("refused {} WatchWorkerInfo stream{} since the last such line; the latest from {}: {}", count,
                    count == 1 ? "" : "s", remote, refusal);
        }
    }

    /** Streams held now, in all. */
    int held() {
        return total.get();
    }
}
