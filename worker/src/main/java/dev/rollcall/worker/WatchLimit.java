package dev.rollcall.worker;

import dev.rollcall.protocol.internal.StreamLimit;
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
import java.util.concurrent.atomic.AtomicBoolean;
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
    /** The key of calls whose transport does not say where they come from (tests, in-process). */
    private static final Object UNKNOWN_PEER = new Object();

    private final StreamLimit limit;

    WatchLimit(int maxWatches, int maxPerConnection) {
        this.limit = new StreamLimit("this worker", "WatchWorkerInfo", maxWatches, MAX_WATCHES_KEY, maxPerConnection,
                MAX_WATCHES_PER_CONNECTION_KEY);
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
        String refusal = limit.acquire(connection);
        if (refusal != null) {
            long count = limit.countRefusal();
            if (count > 0) {
                log.warn("refused {} WatchWorkerInfo stream{} since the last such line; the latest from {}: {}", count,
                        count == 1 ? "" : "s", remote, refusal);
            }
            call.close(Status.RESOURCE_EXHAUSTED.withDescription(refusal), new Metadata());
            return new ServerCall.Listener<>() {
            };
        }
        AtomicBoolean released = new AtomicBoolean();
        Runnable release = () -> {
            if (released.compareAndSet(false, true)) {
                limit.release(connection);
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

    /** Streams held now, in all. */
    int held() {
        return limit.held();
    }
}
