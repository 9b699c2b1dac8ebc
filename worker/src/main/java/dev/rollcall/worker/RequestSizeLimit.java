package dev.rollcall.worker;

import dev.rollcall.protocol.internal.RequestBytesLimit;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;

/**
 * Bounds each request message of Rollcall's own calls ({@code rollcall.v1.*}: WorkerInfo,
 * WatchWorkerInfo) and of gRPC server reflection, while Arrow Flight and the user's services keep
 * the server's own (large) limit. gRPC has one inbound limit per server; this counts a message's
 * bytes as the transport reads them, so an oversized one is refused after {@code max} bytes, never
 * buffered whole: {@code RESOURCE_EXHAUSTED} with a message that names the limit and its key, the
 * same way gRPC refuses a message over its own limit. A compressed message is bounded twice: its
 * bytes on the wire, and what it inflates to while it is parsed (refused then as gRPC refuses an
 * inflated message over its own limit: the call fails {@code UNKNOWN}).
 *
 * <p>Tracers run on the transport's threads, one message at a time per call. Install
 * {@link #quietOnceCancelled()} too: a streaming handler (reflection) answers the cancel that
 * follows a refusal by closing the call itself ({@code CANCELLED: client cancelled}), which
 * otherwise races the refusal's status to the client.
 */
final class RequestSizeLimit {

    static final String KEY = "rollcall.worker.max-request-bytes";

    private RequestSizeLimit() {
    }

    /** The tracer factory that bounds Rollcall's own calls and reflection to {@code max} bytes a message. */
    static ServerStreamTracer.Factory of(int max) {
        return new RequestBytesLimit(max, KEY, "the limit for Rollcall's own calls", RequestSizeLimit::bounds);
    }

    static boolean bounds(String fullMethodName) {
        return fullMethodName.startsWith("rollcall.v1.") || fullMethodName.startsWith("grpc.reflection.");
    }

    /**
     * Drops a handler's close of a bounded call that the transport already cancelled: the client
     * has had (or is being sent) the status of the cancel, and a second one could overtake it.
     */
    static ServerInterceptor quietOnceCancelled() {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                              ServerCallHandler<Q, R> next) {
                if (!bounds(call.getMethodDescriptor().getFullMethodName())) {
                    return next.startCall(call, headers);
                }
                return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                    @Override
                    public void close(Status status, Metadata trailers) {
                        if (!isCancelled()) {
                            super.close(status, trailers);
                        }
                    }
                }, headers);
            }
        };
    }
}
